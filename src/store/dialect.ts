/** The two databases the store speaks: the embedded SQLite file, or PostgreSQL. Its own file so the connection and the migrations both name it without importing each other. */
export type Dialect = 'sqlite' | 'postgres';
