package gorgonia

// gorgonia v0.9.18 requires go4.org/unsafe/assume-no-moving-gc at a
// version that panics at init under Go releases it has not seen (Go
// 1.26 among them). Importing it here makes it a direct dependency, so
// go.mod pins the version that accepts them and go mod tidy keeps it.
import _ "go4.org/unsafe/assume-no-moving-gc"
