package faultline

// CStatusString exposes fl_status_str to the tests (test files cannot use cgo).
var CStatusString = cStatusString
