package housestyle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, from its func line to its
// closing brace.
const maxFuncLines = 120

// sources parses every non-test Go file of the module, by path from the
// module root.
func sources(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found %d Go files under %s: not the module root?", len(files), root)
	}
	return fset, files
}

func TestFunctionLength(t *testing.T) {
	fset, files := sources(t)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		f := files[path]
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFuncLines {
				t.Errorf("%s: func %s is %d lines, more than %d: split it", path, fn.Name.Name, lines, maxFuncLines)
			}
		}
	}
}

func TestNoExportedVariables(t *testing.T) {
	_, files := sources(t)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		f := files[path]
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				for _, name := range s.(*ast.ValueSpec).Names {
					if name.IsExported() && !strings.HasPrefix(name.Name, "Err") {
						t.Errorf("%s: exported package variable %s: make it a constant, a function or a field (only Err sentinels are variables)", path, name.Name)
					}
				}
			}
		}
	}
}

func TestNoInitOrExit(t *testing.T) {
	_, files := sources(t)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		f := files[path]
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s: func init: wire it in cmd/memrank instead", path)
			}
		}
		if f.Name.Name == "main" {
			continue // a command's main may exit with its status
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if ok && sel.Sel.Name == "Exit" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
					t.Errorf("%s: os.Exit outside main: return an error", path)
				}
			}
			return true
		})
	}
}

// TestStandsAlone: nothing in the repository points outside it. A user who
// clones it has no design notes beside it: docs/ is where they read.
func TestStandsAlone(t *testing.T) {
	root := filepath.Join("..", "..")
	self := filepath.Join("internal", "housestyle", "housestyle_test.go")
	forbidden := []string{"../shared", "DESIGN.md", "DESIGN section", "DESIGN 4", "DESIGN 5", "DESIGN 6"}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch filepath.Ext(path) {
		case ".go", ".md", ".txtar", ".yaml", ".yml", ".sh", ".mjs", ".js", ".json":
		default:
			if d.Name() != "Makefile" && d.Name() != "run" {
				return nil
			}
		}
		if rel == self {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if strings.Contains(string(b), f) {
				t.Errorf("%s mentions %q: write what it says in docs/ and link that", rel, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLinksResolve: every relative link of the README and docs/ names a
// file of the repository.
func TestLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	if len(pages) < 7 {
		t.Fatalf("found %d pages: docs/ is missing", len(pages))
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				rel, _ := filepath.Rel(root, page)
				t.Errorf("%s links %s, which is not there", rel, target)
			}
		}
	}
}
