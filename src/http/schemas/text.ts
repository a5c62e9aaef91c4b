import { z } from "zod";
import { UNSAFE_TEXT_MESSAGE, isCleanLine, isCleanText } from "../../shared/text.js";

/** A one-line text field that is stored or shown back: refuses control, bidi and lone-surrogate characters. */
export const textLine = (max: number) => z.string().trim().min(1).max(max).refine(isCleanLine, UNSAFE_TEXT_MESSAGE);

/** The same for a field that may hold several lines (tab and newline allowed). */
export const textBlock = (max: number) => z.string().trim().min(1).max(max).refine(isCleanText, UNSAFE_TEXT_MESSAGE);
