package storetest

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// Aliases and Collections/Update as Qdrant v1.19 has them: lib/storage/src/content_manager/
// alias_mapping.rs and toc/collection_meta_ops.rs (update_aliases: create needs an existing
// collection and a name no collection has; rename of a missing alias is NotFound; delete of a
// missing one is fine; deleting a collection drops its aliases), toc/mod.rs resolve_name (every
// request naming a collection accepts an alias), toc/create_collection.rs (no collection under an
// alias's name), and collection_ops.rs (update diffs merged into the config).

// aliasesOf lists the aliases of coll, sorted.
func aliasesOf(t testing.TB, c *qdrant.Client, coll string) []string {
	t.Helper()
	got, err := c.ListCollectionAliases(opContext(t), coll)
	if err != nil {
		t.Fatalf("list aliases of %q: %v", coll, err)
	}
	slices.Sort(got)
	return got
}

func testAliases(t *testing.T, target Target) {
	c := connect(t, target)
	coll := newCollection(t, c, 2, qdrant.Distance_Dot)
	other := newCollection(t, c, 2, qdrant.Distance_Dot)
	upsert(t, c, coll, point(t, num(1), []float32{1, 0}, map[string]any{"n": 1}))
	alias := collectionName(t)
	renamed := collectionName(t)
	t.Cleanup(func() {
		// Aliases go with their collection; this only tidies up after a failure in between.
		_ = c.DeleteAlias(opContext(t), alias)
		_ = c.DeleteAlias(opContext(t), renamed)
	})
	testAliasesLifecycle(t, c, coll, other, alias, renamed)
	testAliasesCollectionChanges(t, c, coll, alias)
}

// testAliasesLifecycle covers creating, listing, renaming and deleting aliases, and their errors.
func testAliasesLifecycle(t *testing.T, c *qdrant.Client, coll, other, alias, renamed string) {
	t.Run("create, list, rename and delete", func(t *testing.T) {
		if err := c.CreateAlias(opContext(t), alias, coll); err != nil {
			t.Fatalf("create alias: %v", err)
		}
		if diff := cmp.Diff([]string{alias}, aliasesOf(t, c, coll)); diff != "" {
			t.Errorf("aliases of the collection (-want +got):\n%s", diff)
		}
		all, err := c.ListAliases(opContext(t))
		if err != nil {
			t.Fatalf("list aliases: %v", err)
		}
		if !slices.ContainsFunc(all, func(a *qdrant.AliasDescription) bool {
			return a.GetAliasName() == alias && a.GetCollectionName() == coll
		}) {
			t.Errorf("ListAliases = %v, lacks %s -> %s", all, alias, coll)
		}

		// Requests naming the alias reach the collection.
		upsert(t, c, alias, point(t, num(2), []float32{0, 1}, map[string]any{"n": 2}))
		if got := count(t, c, coll, nil); got != 2 {
			t.Errorf("count after an upsert through the alias = %d, want 2", got)
		}
		got := query(t, c, &qdrant.QueryPoints{CollectionName: alias, Query: qdrant.NewQuery(1, 0)})
		if diff := cmp.Diff(numStrings(1, 2), pointIDs(got)); diff != "" {
			t.Errorf("query through the alias (-want +got):\n%s", diff)
		}
		if ok, err := c.CollectionExists(opContext(t), alias); err != nil || !ok {
			t.Errorf("CollectionExists(alias) = %v, %v; want true", ok, err)
		}
		info, err := c.GetCollectionInfo(opContext(t), alias)
		if err != nil || info.GetPointsCount() != 2 {
			t.Errorf("GetCollectionInfo(alias) = %v points, %v; want 2", info.GetPointsCount(), err)
		}

		if err := c.RenameAlias(opContext(t), alias, renamed); err != nil {
			t.Fatalf("rename alias: %v", err)
		}
		if diff := cmp.Diff([]string{renamed}, aliasesOf(t, c, coll)); diff != "" {
			t.Errorf("aliases after rename (-want +got):\n%s", diff)
		}
		if err := c.DeleteAlias(opContext(t), renamed); err != nil {
			t.Fatalf("delete alias: %v", err)
		}
		if got := aliasesOf(t, c, coll); len(got) != 0 {
			t.Errorf("aliases after delete = %v, want none", got)
		}
		// Deleting an alias that does not exist is not an error (AliasPersistence::remove).
		if err := c.DeleteAlias(opContext(t), renamed); err != nil {
			t.Errorf("delete a missing alias: %v", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		missing := collectionName(t)
		err := c.CreateAlias(opContext(t), alias, missing)
		wantStatus(t, err, codes.NotFound, "doesn't exist")
		// An alias cannot take a collection's name.
		err = c.CreateAlias(opContext(t), other, coll)
		wantStatus(t, err, codes.AlreadyExists, "already exists")
		err = c.RenameAlias(opContext(t), missing, alias)
		wantStatus(t, err, codes.NotFound, "does not exists")
	})

	t.Run("no collection under an alias's name", func(t *testing.T) {
		if err := c.CreateAlias(opContext(t), alias, coll); err != nil {
			t.Fatalf("create alias: %v", err)
		}
		err := c.CreateCollection(opContext(t), &qdrant.CreateCollection{CollectionName: alias,
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})})
		wantStatus(t, err, codes.InvalidArgument, "Alias with the same name already exists")
	})
}

// testAliasesCollectionChanges covers aliases of a deleted collection, and UpdateCollection.
func testAliasesCollectionChanges(t *testing.T, c *qdrant.Client, coll, alias string) {
	t.Run("deleting the collection drops its aliases", func(t *testing.T) {
		doomed := newCollection(t, c, 2, qdrant.Distance_Dot)
		a := collectionName(t)
		if err := c.CreateAlias(opContext(t), a, doomed); err != nil {
			t.Fatalf("create alias: %v", err)
		}
		if err := c.DeleteCollection(opContext(t), doomed); err != nil {
			t.Fatalf("delete collection: %v", err)
		}
		all, err := c.ListAliases(opContext(t))
		if err != nil {
			t.Fatalf("list aliases: %v", err)
		}
		for _, d := range all {
			if d.GetAliasName() == a {
				t.Errorf("alias %s survived its collection", a)
			}
		}
		if ok, err := c.CollectionExists(opContext(t), a); err != nil || ok {
			t.Errorf("CollectionExists(dropped alias) = %v, %v; want false", ok, err)
		}
	})

	t.Run("UpdateCollection echoes the new settings", func(t *testing.T) {
		// go-client's own test: an optimizer diff shows in the collection's config.
		err := c.UpdateCollection(opContext(t), &qdrant.UpdateCollection{CollectionName: coll,
			OptimizersConfig: &qdrant.OptimizersConfigDiff{IndexingThreshold: qdrant.PtrOf(uint64(1000))},
			HnswConfig:       &qdrant.HnswConfigDiff{M: qdrant.PtrOf(uint64(32))},
			Params:           &qdrant.CollectionParamsDiff{OnDiskPayload: qdrant.PtrOf(false)},
		})
		if err != nil {
			t.Fatalf("update collection: %v", err)
		}
		info, err := c.GetCollectionInfo(opContext(t), coll)
		if err != nil {
			t.Fatalf("get collection: %v", err)
		}
		cfg := info.GetConfig()
		if cfg.GetOptimizerConfig().GetIndexingThreshold() != 1000 || cfg.GetHnswConfig().GetM() != 32 || cfg.GetParams().GetOnDiskPayload() {
			t.Errorf("config after update: optimizer %v, hnsw %v, params %v", cfg.GetOptimizerConfig(), cfg.GetHnswConfig(), cfg.GetParams())
		}
		// ef_construct is validated range(min = 4) (lib/api/build.rs HnswConfigDiff.ef_construct).
		err = c.UpdateCollection(opContext(t), &qdrant.UpdateCollection{CollectionName: coll,
			HnswConfig: &qdrant.HnswConfigDiff{EfConstruct: qdrant.PtrOf(uint64(1))}})
		wantStatus(t, err, codes.InvalidArgument, "ef_construct")
		err = c.UpdateCollection(opContext(t), &qdrant.UpdateCollection{CollectionName: collectionName(t),
			OptimizersConfig: &qdrant.OptimizersConfigDiff{IndexingThreshold: qdrant.PtrOf(uint64(1000))}})
		wantStatus(t, err, codes.NotFound, "doesn't exist")
	})
}
