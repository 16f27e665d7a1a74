import type { TaskRow } from './task.repository.ts';

export interface TaskView {
  gid: string;
  resource_type: 'task';
  name: string;
  business: string;
  project: string | null;
  assignee: string | null;
  status: string;
  due_on: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export function toTaskView(row: TaskRow): TaskView {
  return {
    gid: row.gid,
    resource_type: 'task',
    name: row.name,
    business: row.business,
    project: row.project,
    assignee: row.assignee,
    status: row.status,
    due_on: row.due_on,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

/**
 * The compact record of a listing: gid, resource_type and name, plus the members asked for,
 * from a row that holds only those columns.
 */
export function toCompactTaskView(
  row: Pick<TaskRow, 'gid' | 'name'> & Partial<TaskRow>,
  optFields: readonly Exclude<keyof TaskView, 'gid' | 'name' | 'resource_type'>[],
): Partial<TaskView> & Pick<TaskView, 'gid' | 'resource_type' | 'name'> {
  const view: Partial<TaskView> & Pick<TaskView, 'gid' | 'resource_type' | 'name'> = {
    gid: row.gid,
    resource_type: 'task',
    name: row.name,
  };
  const fields = view as Record<string, unknown>;
  for (const field of optFields) {
    const value = row[field];
    fields[field] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return view;
}
