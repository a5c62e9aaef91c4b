/**
 * Loads the labelled text corpora (a folder given on the command line; the corpora do not ship
 * with the repository, docs/content-model.md lists them) into one row type, recording each
 * file's sha256 and row counts for the model manifest.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCsv } from "./csv.js";

/** Corpus families; per-source metrics are reported by these names. */
export type SourceName =
  | "sms" | "youtube" | "enron" | "turkish" | "indonesian" | "contact_form" | "sms_mt"
  | "lingspam" | "trec07p" | "nazario" | "newsgroups" | "instagram" | "janitr" | "tg_chat";

/** One labelled text. */
export interface TextRow {
  /** Unique across all corpora (the file's id column, or `<file>:<line>` when it has none). */
  id: string;
  text: string;
  /** 1 = spam, 0 = ham. */
  label: 0 | 1;
  source: SourceName;
  /** ISO 639-1 of the text where the corpus states it. */
  lang: string | null;
  /** Sub-collection: enron subset, YouTube video, Indonesian original class, janitr posts or AI replies. */
  group: string;
}

/** What the manifest records per file. */
export interface SourceFile {
  file: string;
  source: SourceName;
  sha256: string;
  rows: number;
  spam: number;
  ham: number;
}

/** Files read, relative to the corpora folder. */
export const CORPUS_FILES: readonly { file: string; source: SourceName }[] = [
  { file: "sms_spam_collection.csv", source: "sms" },
  { file: "youtube_spam_collection.csv", source: "youtube" },
  { file: "enron_spam/enron1.csv", source: "enron" },
  { file: "enron_spam/enron3.csv", source: "enron" },
  { file: "enron_spam/enron4.csv", source: "enron" },
  { file: "enron_spam/enron6.csv", source: "enron" },
  { file: "multilingual/turkish_sms_collection.csv", source: "turkish" },
  { file: "multilingual/indonesian_sms_spam.csv", source: "indonesian" },
  { file: "contact_form_spam_phrases.csv", source: "contact_form" },
  { file: "multilingual/sms_machine_translated_de_fr_hi.csv", source: "sms_mt" },
  { file: "email/lingspam_bare.csv", source: "lingspam" },
  { file: "email/trec07p_sample.csv", source: "trec07p" },
  { file: "email/nazario_phishing_2004_2005.csv", source: "nazario" },
  { file: "newsgroups/20newsgroups_sample.csv", source: "newsgroups" },
  { file: "comments/instagram_scamspot.csv", source: "instagram" },
  { file: "comments/janitr_x_2026.csv", source: "janitr" },
  { file: "chat/tg_spam_preset.csv", source: "tg_chat" },
];

/**
 * Sources with both classes: each is one fold of the leave-one-source-out evaluation. The rest
 * (20 Newsgroups: ham only; Nazario phishing and the contact-form fragments: spam only) are
 * always in the training side of every fold; the machine-translated SMS set is never used.
 */
export const TWO_CLASS_SOURCES: readonly SourceName[] = ["sms", "youtube", "enron", "turkish", "indonesian", "lingspam", "trec07p", "instagram", "janitr", "tg_chat"];
/** One-class sources, always on the training side. */
export const ONE_CLASS_SOURCES: readonly SourceName[] = ["newsgroups", "nazario", "contact_form"];

const LANG_BY_SOURCE: Partial<Record<SourceName, string>> = {
  sms: "en", youtube: "en", enron: "en", turkish: "tr", indonesian: "id", lingspam: "en", trec07p: "en", nazario: "en", newsgroups: "en", instagram: "en", janitr: "en", tg_chat: "ru",
};

/**
 * Reads every corpus file under `textDir`. Throws when a file is missing or a label is not
 * spam/ham (the builder refuses drifted input rather than training on it).
 */
export function loadCorpora(textDir: string, which: readonly SourceName[] = CORPUS_FILES.map((f) => f.source)): { rows: TextRow[]; files: SourceFile[] } {
  const rows: TextRow[] = [];
  const files: SourceFile[] = [];
  for (const { file, source } of CORPUS_FILES) {
    if (!which.includes(source)) continue;
    const bytes = readFileSync(join(textDir, file));
    const records = parseCsv(bytes.toString("utf8"));
    let spam = 0;
    records.forEach((r, i) => {
      const label = r.label === "spam" ? 1 : r.label === "ham" ? 0 : null;
      if (label === null) throw new Error(`${file} row ${i + 2}: label ${JSON.stringify(r.label)} is not spam/ham`);
      if (r.text === undefined) throw new Error(`${file}: no text column`);
      spam += label;
      rows.push({
        id: r.id ?? r.comment_id ?? `${file}:${i + 2}`,
        text: r.text,
        label,
        source,
        lang: r.lang ?? LANG_BY_SOURCE[source] ?? null,
        group: source === "enron" ? file.replace(/^.*\/|\.csv$/g, "") : (r.video ?? r.original_class ?? r.newsgroup ?? r.part ?? (source === "janitr" ? r.source : undefined) ?? source),
      });
    });
    files.push({ file, source, sha256: createHash("sha256").update(bytes).digest("hex"), rows: records.length, spam, ham: records.length - spam });
  }
  return { rows, files };
}
