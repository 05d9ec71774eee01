/** What a task id of ours looks like (src/core/task-id.ts), for tests that find one in text. */
export const TASK_ID_PATTERN = "[0-9a-z]{9}[0-9a-f]{32}";

/** A task id alone, the whole string. */
export const WHOLE_TASK_ID = new RegExp(`^${TASK_ID_PATTERN}$`);
