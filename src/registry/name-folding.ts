/**
 * One spelling for names that pass for each other: letters that differ only in case,
 * and Unicode forms of one text (`café` composed and decomposed, full-width `ｑｗｅｎ`).
 * Their files are one file on a case-insensitive disk (macOS, Windows volumes), and
 * one on macOS for the Unicode forms.
 */
export function foldedName(name: string): string {
  return name.normalize('NFKC').toLowerCase();
}
