module github.com/faultline/faultline/examples/faultline-agent

go 1.23

require github.com/faultline/faultline/bindings/go v0.0.0

// The binding in this repository, not a published version.
replace github.com/faultline/faultline/bindings/go => ../../bindings/go
