module github.com/faultline/faultline/bindings/go

go 1.23
