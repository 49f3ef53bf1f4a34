module github.com/tlcheck/tlcheck

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/protobuf v1.36.12
	gorgonia.org/cu v0.9.6
	pgregory.net/rapid v1.3.0
)

require (
	github.com/google/uuid v1.1.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/text v0.28.0 // indirect
)
