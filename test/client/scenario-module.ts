/**
 * The shape of test/client/scenario.ts as the spec uses it, without the generated types (which
 * exist only once the spec generated them). scenario.ts checks that it conforms.
 */
export interface ScenarioSummary {
  tags: string[];
  articles: Record<'first' | 'second' | 'draft', { id: number }>;
  lists: Record<'nestjsPublished' | 'published' | 'anyOfTags' | 'mineByTitle', { data: { id: number }[]; total?: number }>;
  validationError: { error: string; code: string; details?: { field: string; message: string }[]; request_id: string };
}

export interface ScenarioModule {
  runScenario(baseUrl: string): Promise<ScenarioSummary>;
}
