import { SESSION_ERA, STATELESS_ERAS, type EraId } from "./eras.js";
import { OWN_ERRORS, type OwnErrorName } from "./own-error-wire.js";

export type { EraId } from "./eras.js";
export type { OwnErrorName } from "./own-error-wire.js";

/**
 * Our own JSON-RPC error codes per protocol era, in one table read from the registered eras: the
 * engine raises the condition's own code, each era writes its own (`ownErrorCodes`, defaulting
 * to the engine's), and a requestor recognises a condition by any era's code.
 */
export interface OwnErrorRow {
  /** The HTTP status the condition travels with, in every era. */
  readonly status: number;
  /** The code per era id (TaskEra.id, StatelessEra.id). */
  readonly codes: Readonly<Record<EraId, number>>;
}

const ERAS = [SESSION_ERA, ...STATELESS_ERAS];

function rowOf(name: OwnErrorName): OwnErrorRow {
  const { engineCode, status } = OWN_ERRORS[name];
  return {
    status,
    codes: Object.fromEntries(ERAS.map((era) => [era.id, era.wire.ownErrorCodes[name] ?? engineCode])) as Record<EraId, number>,
  };
}

export const OWN_ERROR_CODES: Readonly<Record<OwnErrorName, OwnErrorRow>> = {
  rateLimited: rowOf("rateLimited"),
  unauthorized: rowOf("unauthorized"),
  unavailable: rowOf("unavailable"),
};

const ROWS = Object.entries(OWN_ERROR_CODES) as [OwnErrorName, OwnErrorRow][];

/** Which of our conditions a code names, in any era's code; undefined for any other code. */
export function ownErrorOf(code: number): OwnErrorName | undefined {
  return ROWS.find(([, row]) => Object.values(row.codes).includes(code))?.[0];
}

/** The HTTP status of one of our codes in an era that moved it, undefined for any other code. */
export function ownErrorStatusOf(code: number): number | undefined {
  const name = ownErrorOf(code);
  return name === undefined ? undefined : OWN_ERROR_CODES[name].status;
}
