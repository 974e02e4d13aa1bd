/** Pages one read of a PDF sends at most; longer PDFs are read in ranges (offset/limit count pages). */
export const MAX_PAGES = 20;
