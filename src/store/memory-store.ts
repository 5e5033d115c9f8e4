import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { applyHit, type HitOutcome, type WindowState } from './rate-window.js';
import { SharedStore } from './shared-store.js';
import { type AcquireOutcome, applyAcquire, applyRelease, type CounterState, type Slot } from './slots.js';

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * {@link SharedStore} in process: the default without `REDIS_URL`, right for one instance only
 * (a second instance would count, deny and remember sessions on its own). Expired entries are
 * ignored on read and swept every minute, so memory is bounded by what is live.
 */
@Injectable()
export class MemoryStore extends SharedStore implements OnModuleDestroy {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly windows = new Map<string, WindowState>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async getMany(keys: string[]): Promise<(string | null)[]> {
    const now = Date.now();
    return keys.map((key) => this.live(key, now)?.value ?? null);
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    if (ttlMs > 0) this.entries.set(key, { value, expiresAt: Date.now() + ttlMs });
    else this.entries.delete(key);
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) this.entries.delete(key);
  }

  async increment(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }> {
    const now = Date.now();
    const entry = this.live(key, now);
    const next: Entry = entry ? { value: String(Number(entry.value) + 1), expiresAt: entry.expiresAt } : { value: '1', expiresAt: now + windowMs };
    this.entries.set(key, next);
    return { count: Number(next.value), ttlMs: next.expiresAt - now };
  }

  async counter(key: string): Promise<{ count: number; ttlMs: number } | null> {
    const now = Date.now();
    const entry = this.live(key, now);
    return entry ? { count: Number(entry.value), ttlMs: entry.expiresAt - now } : null;
  }

  async hit(key: string, windowMs: number, limit: number, blockMs: number): Promise<HitOutcome> {
    const { state, outcome } = applyHit(this.windows.get(key), Date.now(), windowMs, limit, blockMs);
    this.windows.set(key, state);
    return outcome;
  }

  async acquire(slots: Slot[]): Promise<AcquireOutcome> {
    const now = Date.now();
    const { states, outcome } = applyAcquire(
      slots.map((slot) => this.counterState(slot.key, now)),
      now,
      slots,
    );
    if (outcome.acquired) slots.forEach((slot, i) => this.setCounterState(slot.key, states[i]));
    return outcome;
  }

  async release(...keys: string[]): Promise<void> {
    const now = Date.now();
    for (const key of keys) this.setCounterState(key, applyRelease(this.counterState(key, now), now));
  }

  async raise(key: string, value: number, ttlMs: number): Promise<number> {
    const current = Number(this.live(key)?.value ?? Number.NaN);
    const next = Number.isFinite(current) && current > value ? current : value;
    await this.set(key, String(next), ttlMs);
    return next;
  }

  async ping(): Promise<void> {}

  async clear(): Promise<void> {
    this.entries.clear();
    this.windows.clear();
  }

  /** Drops expired entries and finished windows. */
  sweep(now = Date.now()): void {
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    for (const [key, state] of this.windows) if (state.windowEndsAt <= now && state.blockEndsAt <= now) this.windows.delete(key);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  private counterState(key: string, now: number): CounterState | undefined {
    const entry = this.live(key, now);
    return entry ? { count: Number(entry.value), endsAt: entry.expiresAt } : undefined;
  }

  private setCounterState(key: string, state: CounterState | undefined): void {
    if (state) this.entries.set(key, { value: String(state.count), expiresAt: state.endsAt });
    else this.entries.delete(key);
  }

  private live(key: string, now = Date.now()): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
