package fpbound

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// backendModelDirs is the sorted list of ONNX backend test model folders
// under ../shared/onnx (pytorch-converted and simple); the test is skipped
// when the data is not present.
func backendModelDirs(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..", "shared", "onnx")
	if _, err := os.Stat(root); err != nil {
		t.Skip("../shared/onnx (the ONNX backend test data) is not present")
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "pytorch-converted", "test_*"))
	simple, _ := filepath.Glob(filepath.Join(root, "simple", "test_*"))
	dirs = append(dirs, simple...)
	sort.Strings(dirs)
	return dirs
}
