package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/adapters/gomlx"
	"github.com/tlcheck/tlcheck/adapters/gorgonia"
	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/adapters/spago"
	"github.com/tlcheck/tlcheck/internal/cli"
)

// engines lists every Go engine the command checks, in table order: the
// baseline (tlcheck's own rules in binary64) first. --engine all means
// these.
func engines() []harness.Engine {
	return []harness.Engine{harness.Self(), gorgonia.New(), spago.New(), gomlx.New()}
}

// protocolEngines are the engines in engines/python/ that --engine names
// start as tlcheck.engine.v1 children: $TLCHECK_PYTHON (default python3)
// -m tlcheck_engines NAME, with engines/python on PYTHONPATH. The
// directory is $TLCHECK_ENGINES_DIR, else engines/python in the working
// directory or the nearest parent that has one. --engine python names
// all three.
var protocolEngines = []string{"torch", "jax", "onnxruntime"}

// startDir is the working directory the command was started in (main
// moves to a private one).
var startDir, _ = os.Getwd()

func enginesDir() (string, error) {
	if d := os.Getenv("TLCHECK_ENGINES_DIR"); d != "" {
		return d, nil
	}
	for dir := startDir; dir != ""; {
		d := filepath.Join(dir, "engines", "python")
		if _, err := os.Stat(filepath.Join(d, "tlcheck_engines", "__init__.py")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("no engines/python/tlcheck_engines above %s (set $TLCHECK_ENGINES_DIR)", startDir)
}

// protocolOptions are the limits of every protocol engine: --timeout per
// answer, --memory MiB of resident memory.
type protocolOptions struct {
	timeout time.Duration
	memory  int64
}

// startPython starts the engine name of engines/python.
func startPython(name string, po protocolOptions) (*harness.Protocol, error) {
	dir, err := enginesDir()
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("adapters: --engine %s: %w", name, err))
	}
	py := os.Getenv("TLCHECK_PYTHON")
	if py == "" {
		py = "python3"
	}
	env := []string{"PYTHONPATH=" + dir + string(os.PathListSeparator) + os.Getenv("PYTHONPATH")}
	p, err := harness.NewProtocol([]string{py, "-m", "tlcheck_engines", name}, harness.ProtocolOptions{Env: env, CaseTimeout: po.timeout, MemoryBytes: po.memory})
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("adapters: --engine %s: %w (install the pinned packages: pip install -r requirements.lock)", name, err))
	}
	return p, nil
}

// startCommand starts --engine-cmd's engine: the command line split at
// spaces (no shell).
func startCommand(line string, po protocolOptions) (*harness.Protocol, error) {
	argv := strings.Fields(line)
	if len(argv) == 0 {
		return nil, cli.Usagef("adapters: --engine-cmd: empty command")
	}
	p, err := harness.NewProtocol(argv, harness.ProtocolOptions{CaseTimeout: po.timeout, MemoryBytes: po.memory})
	if err != nil {
		return nil, cli.BadInput(fmt.Errorf("adapters: --engine-cmd: %w", err))
	}
	return p, nil
}
