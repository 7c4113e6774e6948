// A front end turns the text of one source file into the shared model.
import type { FileModel, Language } from '../model/index.ts';

export interface FrontEnd {
  language: Language;
  /** File name extensions this front end reads, with the dot. */
  extensions: readonly string[];
  /** Never throws for bad input: a file that cannot be parsed gets `fatal` set. */
  parse(text: string, file: string, options: FrontEndOptions): FileModel;
}

export interface FrontEndOptions {
  /** Extra call names (in-house wrappers) that take SQL as their first argument. */
  queryFunctions?: readonly string[];
  /** How .sql files that are not PostgreSQL (templates, other databases' SQL) are treated: the config's "sql" key. */
  sql?: {
    dialectDetection?: 'warn' | 'quiet' | 'off';
    /** Parse every statement, also those that can carry no fact (which are otherwise left unparsed): for tests of how a file is read. */
    parseEvery?: boolean;
  };
}
