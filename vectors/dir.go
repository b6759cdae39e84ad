package vectors

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Dir returns the directory of the vector files that ship with the module
// this package was built from (testdata/vectors at the module root).
//
// It is found from the path this package's source had at build time: the
// checkout, for a build inside the module or through a replace directive;
// the module cache (GOMODCACHE, else GOPATH/pkg/mod), for a build that
// required a version, even with -trimpath. It fails when that directory is
// not on this machine, as for a binary built elsewhere or built with
// -trimpath from a checkout; name the directory then.
func Dir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("the source path of this build is unknown: name the vectors directory")
	}
	return dirFrom(file, modCache())
}

// dirFrom is Dir for the source path file of this package's dir.go and the
// module cache directory.
func dirFrom(file, modCache string) (string, error) {
	root := filepath.Dir(filepath.Dir(filepath.FromSlash(file)))
	if !filepath.IsAbs(root) {
		// -trimpath: "module@version/vectors/dir.go" for a required
		// version (found in the module cache); a checkout's path has no
		// version and cannot be found.
		if !strings.Contains(filepath.Base(root), "@") || modCache == "" {
			return "", fmt.Errorf("this build records no source directory (built with -trimpath from %s): name the vectors directory", filepath.ToSlash(root))
		}
		root = filepath.Join(modCache, root)
	}
	dir := filepath.Join(root, "testdata", "vectors")
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", fmt.Errorf("the vectors of this build are not on this machine (looked in %s): name the vectors directory", dir)
	}
	return dir, nil
}

// modCache is the module cache directory, as the go command finds it
// without running it: GOMODCACHE, else the first GOPATH entry's pkg/mod,
// else $HOME/go/pkg/mod.
func modCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if p := filepath.SplitList(os.Getenv("GOPATH")); len(p) > 0 && p[0] != "" {
		return filepath.Join(p[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}
