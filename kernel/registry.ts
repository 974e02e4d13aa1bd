/** A named registry. `register` works until the kernel is sealed; `attach` adds run-time entries (MCP tools). */
export class Registry<T extends { name: string }> {
  private readonly items = new Map<string, { item: T; owner: string; runtime: boolean }>();
  private frozen = false;
  private readonly waiters: Array<(name: string) => Promise<void>> = [];

  /** `owner` names who registers now (the plugin being applied), so conflicts name both sides. */
  constructor(
    readonly kind: string,
    private readonly owner: () => string = () => '(direct)',
  ) {}

  register(item: T, owner = this.owner()): void {
    if (this.frozen) throw new Error(`cannot register ${this.kind} "${item.name}" after the kernel is sealed (from ${owner})`);
    this.add(item, owner, false);
  }

  /** Adds an entry after seal, e.g. tools discovered from an MCP server when a session starts. */
  attach(item: T, owner: string): void {
    this.add(item, owner, true);
  }

  detach(name: string): boolean {
    const entry = this.items.get(name);
    if (!entry || !entry.runtime) return false;
    return this.items.delete(name);
  }

  private add(item: T, owner: string, runtime: boolean): void {
    const existing = this.items.get(item.name);
    if (existing) {
      throw new Error(`${this.kind} "${item.name}" from ${owner} is already registered by ${existing.owner}`);
    }
    this.items.set(item.name, { item, owner, runtime });
  }

  get(name: string): T | undefined {
    return this.items.get(name)?.item;
  }

  /**
   * A plugin that attaches entries later (MCP prompts as their servers connect) says how to wait, within its own
   * time limit, until an entry of that name would have arrived.
   */
  whenAttached(wait: (name: string) => Promise<void>): void {
    this.waiters.push(wait);
  }

  /** The entry now, or after every `whenAttached` waiter has had its chance to attach it (a failing waiter is skipped). */
  async settle(name: string): Promise<T | undefined> {
    if (!this.items.has(name)) await Promise.all(this.waiters.map((wait) => wait(name).catch(() => undefined)));
    return this.get(name);
  }

  has(name: string): boolean {
    return this.items.has(name);
  }

  ownerOf(name: string): string | undefined {
    return this.items.get(name)?.owner;
  }

  list(): T[] {
    return [...this.items.values()].map((entry) => entry.item);
  }

  names(): string[] {
    return [...this.items.keys()];
  }

  freeze(): void {
    this.frozen = true;
  }
}

/** Services are named objects of any shape; typed through the `Services` interface. */
export class ServiceRegistry<S extends Record<string, unknown>> {
  private readonly items = new Map<string, { value: unknown; owner: string }>();
  private frozen = false;

  constructor(private readonly owner: () => string = () => '(direct)') {}

  provide<K extends keyof S & string>(name: K, value: S[K], owner = this.owner()): void {
    if (this.frozen) throw new Error(`cannot provide service "${name}" after the kernel is sealed (from ${owner})`);
    const existing = this.items.get(name);
    if (existing) throw new Error(`service "${name}" from ${owner} is already provided by ${existing.owner}`);
    this.items.set(name, { value, owner });
  }

  get<K extends keyof S & string>(name: K): S[K] | undefined {
    return this.items.get(name)?.value as S[K] | undefined;
  }

  require<K extends keyof S & string>(name: K, by: string): S[K] {
    const value = this.get(name);
    if (value === undefined) throw new Error(`${by} needs the "${name}" service, but no plugin provides it`);
    return value;
  }

  has(name: string): boolean {
    return this.items.has(name);
  }

  names(): string[] {
    return [...this.items.keys()];
  }

  freeze(): void {
    this.frozen = true;
  }
}
