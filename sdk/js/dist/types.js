// The requests and answers of memrank's native API, field for field. Field
// names are the API's own (snake_case), as docs/write-path.md,
// docs/read-path.md and docs/forgetting.md write them, so that what the docs
// say applies here word for word; only the client's own options are
// camelCase.
export {};
