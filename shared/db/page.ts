/** A page of a list answer: at most `first` rows after skipping `skip` (offset paging, as clients send it). */
export type Page = { first: number; skip: number };
