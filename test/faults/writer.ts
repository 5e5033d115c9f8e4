import type http from 'node:http';
import { type Answer, HttpFailure, type RequestSpec, send, writerAgent } from './http.js';
import { Ledger, type Op, type OpKind } from './ledger.js';

/** Where a writer sends its requests; mutable, so a test can point a group of writers elsewhere (a restart, a fail-over). */
export interface Target {
  url: string;
}

/** How writers pace themselves and when they give up. */
export interface WriterControl {
  /** True once no new operation may start (the retries of the current one go on). */
  stopped: boolean;
  /** Retries stop at this time (ms since the epoch); the operation is then unresolved. */
  deadline: number;
}

/** The content of a todo as the writer expects to read it back. */
export interface TodoState {
  title: string;
  content: string | null;
  status: string;
}

/** A todo whose create was acknowledged, with what the audit must find. */
export interface TrackedTodo {
  id: number;
  key: string;
  /** The states it may be in: one, or two when an update's outcome is unknown. */
  states: TodoState[];
  etag?: string;
  /** `yes`: a delete was acknowledged; `maybe`: a delete's outcome is unknown. */
  deleted: 'no' | 'yes' | 'maybe';
  /** No more updates: its state is uncertain. */
  frozen: boolean;
}

/** A registered user: the writer's identity. */
export interface Account {
  id: number;
  username: string;
  token: string;
}

/** The per-request timeout (ms): a request without an answer by then is a timeout and is retried. */
export const REQUEST_TIMEOUT_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One concurrent client: its own user, its own keep-alive connection, a loop of writes (todo
 * creates, updates with If-Match, deletes, article and comment creates, and requests that must be
 * refused), each recorded in the shared {@link Ledger}. A try that gets a 5xx, a timeout, a cut or
 * refused connection — or, for a keyed create, 409 "key in use" — is sent again with the same key
 * and body after a bounded back-off, until a final answer or {@link WriterControl.deadline}.
 */
export class Writer {
  readonly todos: TrackedTodo[] = [];
  readonly articles: Array<{ id: number; key: string }> = [];
  /** Answers the writer did not expect (e.g. 412 on a first update with the current ETag). */
  readonly anomalies: string[] = [];
  private readonly agent: http.Agent = writerAgent();
  private seq = 0;

  constructor(
    readonly index: number,
    readonly account: Account,
    public target: Target,
    private readonly ledger: Ledger,
    private readonly scenario: string,
    /** Characters added to every todo's content (six times that to an article's body): a bigger database grows faster. */
    private readonly padding = 0,
    private readonly thinkMs = 15,
  ) {}

  /** Runs operations until `control.stopped`; resolves when the last one is final or given up. */
  async run(control: WriterControl): Promise<void> {
    while (!control.stopped) {
      await this.step(control);
      await sleep(this.thinkMs + Math.random() * this.thinkMs);
    }
  }

  /** Closes the writer's connection. */
  close(): void {
    this.agent.destroy();
  }

  /** A fresh key naming the scenario, the writer and the operation: titles carry it, so the audit finds duplicates. */
  private nextKey(): string {
    this.seq += 1;
    return `${this.scenario}-w${this.index}-${this.seq}-${Math.random().toString(36).slice(2, 8)}`;
  }

  private async step(control: WriterControl): Promise<void> {
    const roll = Math.random();
    const live = this.todos.filter((todo) => todo.deleted === 'no' && !todo.frozen && todo.etag);
    const pick = () => live[Math.floor(Math.random() * live.length)];
    if (roll < 0.55 || live.length === 0) return this.createTodo(control);
    if (roll < 0.7) return this.patchTodo(pick(), control);
    if (roll < 0.78) return this.deleteTodo(pick(), control);
    if (roll < 0.84) return this.createArticle(control);
    if (roll < 0.92 && this.articles.length > 0) return this.createComment(this.articles[Math.floor(Math.random() * this.articles.length)], control);
    if (roll < 0.96) return this.refusedCreate(control);
    return this.stalePatch(pick(), control);
  }

  private async createTodo(control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const state: TodoState = {
      title: `todo ${key}`,
      content: `content of ${key}${'.'.repeat(this.padding)}`,
      status: Math.random() < 0.5 ? 'pending' : 'in_progress',
    };
    const op = this.open('create-todo', key, 'POST', '/v1/todos', state);
    const answer = await this.execute(op, { 'Idempotency-Key': key }, control, true);
    if (answer?.status === 201) {
      const body = answer.body as { id: number; title: string; content: string | null; status: string };
      if (body.title !== state.title || body.content !== state.content || body.status !== state.status)
        this.anomalies.push(`${key}: 201 body ${JSON.stringify(body)} differs from the request`);
      this.todos.push({ id: body.id, key, states: [state], etag: answer.headers.etag as string | undefined, deleted: 'no', frozen: false });
    } else if (answer) this.anomalies.push(`${key}: create answered ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  private async patchTodo(todo: TrackedTodo, control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const before = todo.states[0];
    const patch = { status: before.status === 'done' ? 'pending' : 'done', content: `patched by ${key}` };
    const after: TodoState = { ...before, ...patch };
    const op = this.open('patch-todo', key, 'PATCH', `/v1/todos/${todo.id}`, patch);
    const answer = await this.execute(op, { 'If-Match': todo.etag! }, control, false);
    if (answer?.status === 200) {
      todo.states = [after];
      todo.etag = answer.headers.etag as string | undefined;
      return;
    }
    // an earlier try may have been applied (then the retry's If-Match is stale: 412): either state may be read back
    if (!answer || (answer.status === 412 && Ledger.uncertain(op))) {
      todo.states = [before, after];
      todo.frozen = true;
      return;
    }
    this.anomalies.push(`${key}: PATCH /v1/todos/${todo.id} answered ${answer.status} ${JSON.stringify(answer.body)}`);
    todo.frozen = true;
  }

  private async deleteTodo(todo: TrackedTodo, control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const op = this.open('delete-todo', key, 'DELETE', `/v1/todos/${todo.id}`, undefined);
    const answer = await this.execute(op, {}, control, false);
    todo.frozen = true;
    if (answer?.status === 204 || (answer?.status === 404 && Ledger.uncertain(op))) todo.deleted = 'yes';
    else if (!answer) todo.deleted = 'maybe';
    else this.anomalies.push(`${key}: DELETE /v1/todos/${todo.id} answered ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  private async createArticle(control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const body = { title: `article ${key}`, body: `written by writer ${this.index}${'.'.repeat(this.padding * 6)}`, status: 'published' };
    const op = this.open('create-article', key, 'POST', '/v1/articles', body);
    const answer = await this.execute(op, { 'Idempotency-Key': key }, control, true);
    if (answer?.status === 201) this.articles.push({ id: (answer.body as { id: number }).id, key });
    else if (answer) this.anomalies.push(`${key}: article create answered ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  private async createComment(article: { id: number }, control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const op = this.open('create-comment', key, 'POST', `/v1/articles/${article.id}/comments`, { body: `comment ${key}` });
    const answer = await this.execute(op, { 'Idempotency-Key': key }, control, true);
    if (answer && answer.status !== 201) this.anomalies.push(`${key}: comment create answered ${answer.status} ${JSON.stringify(answer.body)}`);
  }

  /** A create the service must refuse (an unknown status: 422): nothing of it may exist afterwards. */
  private async refusedCreate(control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const op = this.open('refused-create', key, 'POST', '/v1/todos', { title: `todo ${key}`, content: `refused ${key}`, status: 'not-a-status' });
    const answer = await this.execute(op, { 'Idempotency-Key': key }, control, true);
    if (answer && answer.status !== 422 && answer.status !== 400) this.anomalies.push(`${key}: invalid create answered ${answer.status}`);
  }

  /** An update with an If-Match that is never current (412): it must change nothing. */
  private async stalePatch(todo: TrackedTodo, control: WriterControl): Promise<void> {
    const key = this.nextKey();
    const op = this.open('stale-patch', key, 'PATCH', `/v1/todos/${todo.id}`, { content: `refused ${key}` });
    const answer = await this.execute(op, { 'If-Match': '"999999.v1"' }, control, false);
    if (answer && answer.status !== 412) this.anomalies.push(`${key}: stale If-Match answered ${answer.status}`);
  }

  private open(kind: OpKind, key: string, method: string, path: string, body: unknown): Op {
    return this.ledger.open({ key, kind, writer: this.index, method, path, body });
  }

  /**
   * Sends `op` until it gets a final answer: anything but a 5xx, a failure, or (when `retryConflict`)
   * a 409 for a key in use. Resolves with that answer, or undefined when the deadline came first.
   */
  private async execute(op: Op, headers: Record<string, string>, control: WriterControl, retryConflict: boolean): Promise<Answer | undefined> {
    const spec: RequestSpec = {
      method: op.method,
      path: op.path,
      headers: { Authorization: `Bearer ${this.account.token}`, ...headers },
      json: op.body,
      timeoutMs: REQUEST_TIMEOUT_MS,
    };
    for (let tries = 0; ; tries += 1) {
      const at = Date.now();
      const target = this.target.url;
      try {
        const answer = await send(this.agent, target, spec);
        const body = answer.body as { code?: string } | undefined;
        op.attempts.push({
          at,
          sentAt: answer.sentAt,
          ms: answer.answeredAt - at,
          target,
          status: answer.status,
          code: body?.code,
          retryAfter: answer.headers['retry-after'] as string | undefined,
          replayed: answer.headers['idempotent-replayed'] === 'true',
          reused: answer.reused,
        });
        const again = answer.status >= 500 || (retryConflict && answer.status === 409 && body?.code === 'conflict');
        if (!again) {
          op.final = { status: answer.status, body: answer.body, headers: answer.headers };
          return answer;
        }
      } catch (error) {
        if (!(error instanceof HttpFailure)) throw error;
        op.attempts.push({ at, sentAt: error.sentAt, ms: error.at - at, target, failure: error.kind, error: error.code, reused: error.reused });
      }
      const pause = Math.min(1000, 50 * 2 ** tries) + Math.random() * 50;
      if (Date.now() + pause > control.deadline) return undefined;
      await sleep(pause);
    }
  }
}

/** Registers `username` (password fixed) on `base` and logs in; retries a 5xx or failure a few times (setup is before any fault). */
export async function register(base: string, username: string): Promise<Account> {
  const agent = writerAgent();
  const password = 'fault-suite-password';
  const call = async (path: string, json: unknown): Promise<Answer> => {
    for (let tries = 0; ; tries += 1) {
      try {
        const answer = await send(agent, base, { method: 'POST', path, json, timeoutMs: 30_000 });
        if (answer.status < 500 || tries >= 5) return answer;
      } catch (error) {
        if (tries >= 5) throw error;
      }
      await sleep(500);
    }
  };
  try {
    const created = await call('/v1/users', { username, password, name: `Fault writer ${username}` });
    if (created.status !== 201) throw new Error(`registering ${username}: ${created.status} ${JSON.stringify(created.body)}`);
    const login = await call('/v1/login', { username, password });
    if (login.status !== 200) throw new Error(`logging in ${username}: ${login.status} ${JSON.stringify(login.body)}`);
    return { id: (created.body as { id: number }).id, username, token: (login.body as { token: string }).token };
  } finally {
    agent.destroy();
  }
}
