// Package fleettest checks gpuleak's export with a real query engine:
// DuckDB (github.com/duckdb/duckdb-go/v2, which links DuckDB's library
// through cgo) loads the Parquet export of ../../shared/fixtures and
// answers the README's fleet queries. It is its own module so that the
// main module's build and "go test ./..." do not pay for DuckDB's cgo
// build; .ci/run runs it after the default suite ("cd fleettest && go test").
package fleettest
