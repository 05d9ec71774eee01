/**
 * `mcp-tasks/testing` — for writing a store of your own: the behavioural contract suites every
 * built-in store passes (run them in vitest, an optional peer dependency of this entry), and every
 * type and rule a TaskStore / LeaseStore implementation deals in.
 */
export { storeContract, newTask } from "../testing/store-contract.js";
export { leaseContract } from "../testing/lease-contract.js";
export { outboxContract } from "../testing/outbox-contract.js";
export { toolPauseContract } from "../testing/tool-pause-contract.js";
export { isToolPauseStore, type ToolPauseStore, type ToolPause } from "../store/tool-pause-store.js";
export {
  isOutboxStore,
  type OutboxStore,
  type OutboxDelivery,
  type ClaimedDelivery,
  type DeliverySettlement,
  type DeliveryFilter,
  type DeliveryState,
  type OutboxStats,
} from "../store/outbox-store.js";
export type {
  TaskStore,
  TaskFilter,
  TransitionPatch,
  AnnotatePatch,
  OwnerScope,
  KeyedCreation,
  StoredKey,
  RetentionRules,
  ExpiredBatch,
} from "../store/task-store.js";
export type { QueueView, RunQueueStore, QueueDepth, ClaimCaps } from "../store/run-queue.js";
export type { Claim, ClaimedTask } from "../store/claim.js";
export type { TaskKey } from "../core/idempotency.js";
export { isLeaseStore, type LeaseStore, type ClusterStore } from "../store/lease-store.js";
export type { ClusterView, LeaseInfo, WorkerBeat, WorkerInfo } from "../store/cluster-view.js";
export { isCheckpointStore, type CheckpointStore, type Checkpoint, type StepFacts } from "../store/checkpoint-store.js";
export type {
  NewTask,
  TaskRecord,
  TaskOutcome,
  RpcErrorShape,
  TaskOrigin,
  TaskProgress,
  InputRequest,
  StatusChange,
} from "../core/task.js";
export type { ListPosition } from "../core/cursor.js";
export {
  TASK_STATUSES,
  TERMINAL_STATUSES,
  ACTIVE_STATUSES,
  isTerminal,
  canTransition,
  allowedSources,
  type TaskStatus,
} from "../core/task-status.js";
export { StoreError, type StoreErrorReason } from "../store/store-rules.js";
export type { EventBus, Unsubscribe } from "../events/event-bus.js";
export type { TaskEvent } from "../events/task-event.js";
export type { StoreNotify } from "../core/store-notify.js";
export type { StreamEventStore, StoredStreamEvent } from "../store/stream-event-store.js";
export { waitContract } from "../testing/wait-contract.js";
export {
  isWaitStore,
  type WaitStore,
  type WaitRecord,
  type WaitKind,
  type WaitMode,
  type WaitOutcome,
  type WokenTask,
  type ParkedCounts,
  type StoredEvent,
  type NewEvent,
  type EmittedEvent,
} from "../store/wait-store.js";
export type { WebhookRoute } from "../core/task.js";
