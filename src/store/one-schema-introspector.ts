import { PostgresDialect, sql, type DatabaseIntrospector, type DatabaseMetadata, type DatabaseMetadataOptions, type Kysely, type PostgresDialectConfig, type SchemaMetadata, type TableMetadata } from 'kysely';

/**
 * PostgreSQL for a store that lives in one schema. Kysely's own introspector
 * lists the tables of every schema in the database, calling functions on
 * each schema's name; a schema another client drops meanwhile (another
 * tenant of the database, a parallel test run) fails that listing with
 * "schema … does not exist". Its migrator only asks whether its own two
 * tables exist, so this introspector looks in the store's schema alone (the
 * connection's current schema when none is named), and never at another's.
 */
export class OneSchemaPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly schema: string | undefined,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OneSchemaIntrospector(db, this.schema);
  }
}

class OneSchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schema: string | undefined,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select ${this.schemaName()}::text as name`.execute(this.db);
    return rows;
  }

  /** The tables and views of the one schema, with their names only: all the migrator reads. */
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, ns.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = ${this.schemaName()} and c.relkind in ('r', 'v', 'p')
      order by c.relname`.execute(this.db);
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.kind === 'v', columns: [] }));
  }

  async getMetadata(_options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }

  private schemaName() {
    return this.schema === undefined ? sql<string>`current_schema()` : sql<string>`${this.schema}`;
  }
}
