package faultline

// CStatusString exposes fl_status_str to the tests (test files cannot use cgo).
var CStatusString = cStatusString

// ParseFields exposes the fields_json decoder.
var ParseFields = parseFields

// EngineRefs is the number of open sessions pinning e's ruleset.
func EngineRefs(e *Engine) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refs
}

// Compatible is the library/header version rule checkLibrary applies.
var Compatible = compatible
