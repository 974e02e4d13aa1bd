/** Pages one read of a PDF sends at most; longer PDFs are read in ranges (offset/limit count pages). */
export const MAX_PAGES = 20;
/** PDFs larger than this are not read at all (checked before reading: pdf-lib holds the whole file and more). */
export const MAX_PDF_FILE_BYTES = 64 * 1024 * 1024;
/** Notebooks larger than this are not read or edited (checked before reading; read_file's bound for text). */
export const MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024;
