/** The states of a task, in the order a task usually moves through them. */
export const TASK_STATUSES = ['open', 'in_progress', 'completed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
/** The states in which a task counts as open (open_tasks) and blocks the tasks depending on it. */
export const OPEN_STATUSES = ['open', 'in_progress'] as const satisfies readonly TaskStatus[];
