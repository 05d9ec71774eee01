import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";

/** What an application's handler of a server request learns besides the params. */
export interface InputRequestInfo {
  /** The requestor-side task this request belongs to (related-task `_meta`, T-META-1), else null. */
  relatedTaskId: string | null;
  /** The client-hosted task running this request (the server sent it task-augmented), else null. */
  taskId: string | null;
  /** Aborts when the server withdraws the request or cancels the client-hosted task. */
  signal: AbortSignal;
}

/** Answers `elicitation/create`. */
export type ElicitHandler = (params: ElicitRequestParams, info: InputRequestInfo) => Promise<ElicitResult>;
/** Answers `sampling/createMessage`. */
export type SampleHandler = (params: CreateMessageRequestParams, info: InputRequestInfo) => Promise<CreateMessageResult>;
