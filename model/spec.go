package model

import "github.com/tlcheck/tlcheck/internal/cli"

// Spec names a model and its input as a command's flags give them: an IR
// graph (Graph, Payload) or an ONNX model (ONNX), and the input as tensor
// files (Inputs) or a recorded data set directory (Data, ONNX only). Cmd
// names the command in its messages.
type Spec struct {
	Cmd                  string
	Graph, Payload, ONNX string
	Inputs               []string
	Data                 string
}

// HasInput reports whether the spec names an input.
func (s *Spec) HasInput() bool { return len(s.Inputs) > 0 || s.Data != "" }

// Load reads the model and its input as the flags name them, checked
// against each other before anything runs (LoadIR, LoadONNX); an either/or the flags break is a usage error.
func (s *Spec) Load() (*Model, error) {
	switch {
	case s.Graph != "" && s.ONNX != "":
		return nil, cli.Usagef("%s: --graph and --onnx name two models; give one", s.Cmd)
	case s.ONNX != "":
		if s.Payload != "" {
			return nil, cli.Usagef("%s: --payload goes with --graph: an ONNX model carries its parameters as initializers", s.Cmd)
		}
		paths, err := s.inputPaths()
		if err != nil {
			return nil, err
		}
		return LoadONNX(s.ONNX, paths, Options{})
	}
	if s.Data != "" {
		return nil, cli.Usagef("%s: --data is a recorded ONNX data set: it goes with --onnx", s.Cmd)
	}
	if s.Graph == "" {
		return nil, cli.Usagef("%s: --graph or --onnx is required", s.Cmd)
	}
	if len(s.Inputs) > 1 {
		return nil, cli.Usagef("%s: --input given %d times: a torchlean.ir.v1 graph has one input", s.Cmd, len(s.Inputs))
	}
	in := ""
	if len(s.Inputs) == 1 {
		in = s.Inputs[0]
	}
	return LoadIR(s.Cmd, s.Graph, s.Payload, in)
}

// LoadGraph reads the model alone, for a command that runs no input
// (plan, import): an IR graph and payload, or an ONNX model imported with
// its integer inputs bound to the --input/--data tensors when given
// (an Embedding's indices: without them such a model does not import).
func (s *Spec) LoadGraph() (*Model, error) {
	switch {
	case s.Graph != "" && s.ONNX != "":
		return nil, cli.Usagef("%s: --graph and --onnx name two models; give one", s.Cmd)
	case s.ONNX != "":
		if s.Payload != "" {
			return nil, cli.Usagef("%s: --payload goes with --graph: an ONNX model carries its parameters as initializers", s.Cmd)
		}
		var paths []string
		if s.Data != "" || len(s.Inputs) > 0 {
			var err error
			if paths, err = s.inputPaths(); err != nil {
				return nil, err
			}
		}
		return LoadONNX(s.ONNX, paths, Options{})
	case s.Graph == "":
		return nil, cli.Usagef("%s: --graph or --onnx is required", s.Cmd)
	case len(s.Inputs) > 0 || s.Data != "":
		return nil, cli.Usagef("%s: --input and --data bind an ONNX model's integer inputs: they go with --onnx", s.Cmd)
	}
	return ReadGraph(s.Graph, s.Payload)
}

// inputPaths lists the input files: the --input flags, or --data's
// input_N.pb files.
func (s *Spec) inputPaths() ([]string, error) {
	if s.Data != "" {
		if len(s.Inputs) > 0 {
			return nil, cli.Usagef("%s: --input and --data both name the inputs; give one", s.Cmd)
		}
		return DataFiles("data", s.Data, "input")
	}
	if len(s.Inputs) == 0 {
		return nil, cli.Usagef("%s: --input (or --data DIR) is required", s.Cmd)
	}
	return s.Inputs, nil
}
