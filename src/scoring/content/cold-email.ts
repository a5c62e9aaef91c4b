/**
 * Cold-email score: how much a message reads like unsolicited sales outreach (SEO, web design,
 * lead generation, marketing, "I wanted to know your price"). There is no labelled public set
 * for this, so it is a phrase model built by hand from the outreach-style fragments of
 * contact_form_spam_phrases.csv (real contact-form spam) plus the usual structure of such mails:
 * an offer, a pitch framing it at the recipient's business, and a call to action.
 *
 * Score: s = sum of the weights of the groups that fire, cold_email = 1 - exp(-s).
 *   offer     0.9 for the first service named, +0.3 for a second (SEO, backlinks, guest posts,
 *             web design/development, app development, lead generation, marketing, ads,
 *             explainer videos, virtual assistants, funding for your business, form blasting...)
 *   pitch     0.8 "I came across your website", "we can help", "are you still looking",
 *             "our agency/team", "increase your sales/traffic", "your online presence", ...
 *   price     2.0 the "I wanted to know your price" template (English and ~25 translations)
 *   cta       0.4 "let me know", "reply", "schedule a call", "free quote/audit", WhatsApp, Skype...,
 *             only together with an offer or a pitch
 *   optout    0.4 "unsubscribe", "reply stop", "opt out" inside a message (bulk mail tell),
 *             only together with an offer or a pitch
 * So a named service alone gives 0.59, a service plus a pitch 0.82, plus a call to action 0.88;
 * the price template alone gives 0.86. The trainer reports how often this fires on each corpus.
 */

import { registerWordList, scanLeadWords } from "./lead-words.js";

const OFFER = /\b(?:seo|search engine optimi[sz]ation|backlinks?|link building|guest posts?|web ?(?:site)? ?(?:design|development|redesign)|web developer|website (?:design|development|redesign|audit)|app development|mobile app|(?:build|design|develop|redesign) (?:your |a |new |modern )?(?:websites?|web ?sites?|apps?|online stores?)|lead generation|leads? for your|(?:digital|social media|email|content|affiliate|video) marketing|marketing (?:services?|agency|campaigns?)|google ads|ppc|facebook ads|ad campaigns?|explainer videos?|animated videos?|graphic design|logo design|virtual assistants?|outsourc\w*|(?:business|merchant) (?:funding|loans?|financing)|working capital|form blasting|contact form ads|(?:more|targeted|organic) (?:traffic|visitors|leads|customers)|website traffic|google rankings?|(?:first|1st) page (?:of|on) google|crm|automation (?:services?|tools?)|ai (?:chatbot|agents?|automation))\b/gi;
const PITCH = /\b(?:i (?:came|stumbled) across your|(?:i|we) (?:noticed|checked|visited|looked at|reviewed) your (?:website|site|business|company)|your (?:website|site) (?:is|isn'?t|could|needs|has|lacks)|are you still looking|we (?:can|could|will) help|here'?s how we can help|i'?m reaching out|i am reaching out|(?:i|we) (?:wanted|want) to (?:reach out|offer|introduce)|our (?:agency|team|company|services|experts|portfolio)|we are an? (?:agency|team|company)|we'?re an? (?:agency|team|company)|(?:increase|boost|grow|double) your (?:sales|traffic|revenue|business|leads|rankings?|visibility)|(?:enhance|improve) your online presence|your online presence|take your business|competitors? (?:to|are)|market share|we specialize|we offer|i offer|affordable (?:price|rates?|packages?)|packages? start|(?:low|best) prices?)\b/i;
const PRICE = /\b(?:i wanted to know your price|wanted to know your price|quería saber tu precio|queria saber tu precio|volevo sapere il tuo prezzo|ich wollte (?:ihren|deinen) preis wissen|je voulais conna[iî]tre (?:votre|ton) prix|eu queria saber o seu pre[cç]o|ik wilde (?:je|uw) prijs weten|saya ingin tahu harga|jeg ønskede at kende din pris|jag ville veta ditt pris|chciałem poznać twoją cenę|chtěl jsem znát vaši cenu|fiyatınızı bilmek istedim|volia saber el seu preu|ek wou jou prys ken|aš norėjau sužinoti jūsų kainą|halusin tietää hintasi|ego volo scire vestri pretium|eisiau gwybod eich pris|të di çmimin tuaj|sáng muốn biết giá|ingin tahu harga anda)\b/i;
const CTA = /\b(?:let me know|reply (?:to this|back|with|yes)|just reply|get back to me|schedule a (?:call|meeting|demo)|book a (?:call|meeting|demo)|quick call|free (?:quote|audit|consultation|trial|demo|analysis|report)|no obligation|call me|contact me|whatsapp|skype|telegram|click here|visit (?:our|my) (?:site|website)|would you be interested|are you interested|if interested|interested\?)\b/i;
const OPTOUT = /\b(?:unsubscribe|opt[- ]out|reply stop|to stop receiving|remove you from)\b/i;

/** Pre-check bits (lead-words.ts): a clear bit means the pattern cannot match. */
const OFFER_BIT = registerWordList(OFFER);
const PITCH_BIT = registerWordList(PITCH);
const PRICE_BIT = registerWordList(PRICE);
const CTA_BIT = registerWordList(CTA);
const OPTOUT_BIT = registerWordList(OPTOUT);

/** Weights of the groups (see the module comment). */
export const COLD_EMAIL_WEIGHTS = { offer: 0.9, second_offer: 0.3, pitch: 0.8, price: 2.0, cta: 0.4, optout: 0.4 } as const;

/** Cold-outreach score of `text` in [0, 1] (4 decimals); `leads` is scanLeadWords(text). */
export function coldEmailScore(text: string, leads: number = scanLeadWords(text)): number {
  const W = COLD_EMAIL_WEIGHTS;
  let s = 0;
  OFFER.lastIndex = 0;
  const first = (leads & OFFER_BIT) !== 0 ? OFFER.exec(text) : null;
  let hook = false;
  if (first) {
    s += W.offer;
    hook = true;
    let next: RegExpExecArray | null;
    while ((next = OFFER.exec(text)) !== null) {
      if (next[0].toLowerCase() !== first[0].toLowerCase()) {
        s += W.second_offer;
        break;
      }
    }
  }
  if ((leads & PITCH_BIT) !== 0 && PITCH.test(text)) {
    s += W.pitch;
    hook = true;
  }
  if ((leads & PRICE_BIT) !== 0 && PRICE.test(text)) s += W.price;
  if (hook && (leads & CTA_BIT) !== 0 && CTA.test(text)) s += W.cta;
  if (hook && (leads & OPTOUT_BIT) !== 0 && OPTOUT.test(text)) s += W.optout;
  return Math.round((1 - Math.exp(-s)) * 1e4) / 1e4;
}
