package store_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/memrank/memrank/store"
)

func createAlias(alias, coll string) *qdrant.AliasOperations {
	return &qdrant.AliasOperations{Action: &qdrant.AliasOperations_CreateAlias{CreateAlias: &qdrant.CreateAlias{AliasName: alias, CollectionName: coll}}}
}

func renameAlias(old, nu string) *qdrant.AliasOperations {
	return &qdrant.AliasOperations{Action: &qdrant.AliasOperations_RenameAlias{RenameAlias: &qdrant.RenameAlias{OldAliasName: old, NewAliasName: nu}}}
}

func deleteAlias(alias string) *qdrant.AliasOperations {
	return &qdrant.AliasOperations{Action: &qdrant.AliasOperations_DeleteAlias{DeleteAlias: &qdrant.DeleteAlias{AliasName: alias}}}
}

func aliasList(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	all, err := db.ListAliases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range all {
		out[a.GetAliasName()] = a.GetCollectionName()
	}
	return out
}

func TestAliases(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createColl(t, db, "c1", 2, qdrant.Distance_Dot)
	createColl(t, db, "c2", 2, qdrant.Distance_Dot)
	upsert(t, db, "c1", pt{num(1), []float32{1, 0}, nil})
	alias := func(ops ...*qdrant.AliasOperations) error {
		return db.UpdateAliases(ctx, &qdrant.ChangeAliases{Actions: ops})
	}
	if err := alias(createAlias("live", "c1"), createAlias("old", "c2"), createAlias("tmp", "c2"), deleteAlias("tmp"), deleteAlias("never")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"live": "c1", "old": "c2"}, aliasList(t, db)); diff != "" {
		t.Fatalf("aliases (-want +got):\n%s", diff)
	}

	// Reads, writes and collection info go through the alias.
	upsert(t, db, "live", pt{num(2), []float32{0, 1}, nil})
	if got := ids(query(t, db, &qdrant.QueryPoints{CollectionName: "live", Query: qdrant.NewQuery(1, 0)})); !cmp.Equal(got, []string{"1", "2"}) {
		t.Fatalf("query through alias = %v", got)
	}
	n, err := db.Count(ctx, &qdrant.CountPoints{CollectionName: "c1"})
	if err != nil || n != 2 {
		t.Fatalf("count of the real collection = %d, %v; want 2", n, err)
	}
	if info, err := db.CollectionInfo(ctx, "live"); err != nil || info.GetPointsCount() != 2 {
		t.Fatalf("info through alias: %v, %v", info, err)
	}
	if ok, err := db.CollectionExists(ctx, "live"); err != nil || !ok {
		t.Fatalf("exists through alias: %v, %v", ok, err)
	}
	if res, err := db.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: "live", Operations: []*qdrant.PointsUpdateOperation{
		batchSetPayload(nil, valueMap(t, map[string]any{"a": 1}), 1)}}); err != nil || len(res) != 1 {
		t.Fatalf("batch through alias: %v, %v", res, err)
	}
	names, err := db.ListCollections(ctx)
	if err != nil || !cmp.Equal(names, []string{"c1", "c2"}) {
		t.Fatalf("collections = %v, %v: aliases are not collections", names, err)
	}

	// Switch the alias atomically: rename and re-point in one request.
	if err := alias(renameAlias("live", "prev"), createAlias("live", "c2")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"live": "c2", "prev": "c1", "old": "c2"}, aliasList(t, db)); diff != "" {
		t.Fatalf("aliases (-want +got):\n%s", diff)
	}
	col, err := db.ListCollectionAliases(ctx, "c2")
	if err != nil {
		t.Fatal(err)
	}
	want := []*qdrant.AliasDescription{{AliasName: "live", CollectionName: "c2"}, {AliasName: "old", CollectionName: "c2"}}
	if diff := cmp.Diff(want, col, protocmp.Transform()); diff != "" {
		t.Fatalf("aliases of c2 (-want +got):\n%s", diff)
	}
	if col, err := db.ListCollectionAliases(ctx, "live"); err != nil || len(col) != 0 {
		t.Fatalf("aliases of an alias name = %v, %v; want none (no resolution)", col, err)
	}

	errs := []struct {
		name string
		err  error
		code codes.Code
		msg  string
	}{
		{"alias of a missing collection", alias(createAlias("x", "nope")), codes.NotFound, "Not found: Collection `nope` doesn't exist!"},
		{"alias of an alias", alias(createAlias("x", "live")), codes.NotFound, "Not found: Collection `live` doesn't exist!"},
		{"alias named as a collection", alias(createAlias("c1", "c2")), codes.AlreadyExists, "Wrong input: Collection `c1` already exists!"},
		{"rename a missing alias", alias(renameAlias("nope", "x")), codes.NotFound, "Not found: Alias nope does not exists!"},
		{"empty action", alias(&qdrant.AliasOperations{}), codes.InvalidArgument, "Malformed AliasOperation type"},
		{"collection named as an alias", db.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "live",
			VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot})}),
			codes.InvalidArgument, "Wrong input: Can't create collection with name live. Alias with the same name already exists"},
		{"a failing action applies none", alias(deleteAlias("old"), renameAlias("nope", "x")), codes.NotFound, "Not found: Alias nope does not exists!"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) { wantStatus(t, tc.err, tc.code, tc.msg) })
	}
	if _, ok := aliasList(t, db)["old"]; !ok {
		t.Fatal("alias deleted by a request that failed")
	}

	// An alias wins over a collection of the same name (rename does not check).
	if err := alias(renameAlias("prev", "c2")); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Count(ctx, &qdrant.CountPoints{CollectionName: "c2"}); err != nil || n != 2 {
		t.Fatalf("count of c2 (an alias of c1 now) = %d, %v; want 2", n, err)
	}

	// Aliases persist, and go with their collection.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir)
	if diff := cmp.Diff(map[string]string{"live": "c2", "c2": "c1", "old": "c2"}, aliasList(t, db)); diff != "" {
		t.Fatalf("aliases after reopen (-want +got):\n%s", diff)
	}
	// Deleting by an alias name deletes nothing (no resolution).
	if ok, err := db.DeleteCollection(ctx, "live"); err != nil || ok {
		t.Fatalf("delete by alias = %v, %v; want false", ok, err)
	}
	if ok, err := db.DeleteCollection(ctx, "c1"); err != nil || !ok {
		t.Fatalf("delete c1 = %v, %v", ok, err)
	}
	if diff := cmp.Diff(map[string]string{"live": "c2", "old": "c2"}, aliasList(t, db)); diff != "" {
		t.Fatalf("aliases after deleting c1 (-want +got):\n%s", diff)
	}
	if _, err := db.Count(ctx, &qdrant.CountPoints{CollectionName: "c2"}); err != nil {
		t.Fatalf("c2 itself is reachable again once its shadowing alias is gone: %v", err)
	}
}

func TestUpdateCollection(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	createColl(t, db, "c", 2, qdrant.Distance_Cosine)
	if err := db.UpdateAliases(ctx, &qdrant.ChangeAliases{Actions: []*qdrant.AliasOperations{createAlias("a", "c")}}); err != nil {
		t.Fatal(err)
	}
	before, err := db.CollectionInfo(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	md := valueMap(t, map[string]any{"owner": "x", "n": 1})
	err = db.UpdateCollection(ctx, &qdrant.UpdateCollection{
		CollectionName:   "a",
		OptimizersConfig: &qdrant.OptimizersConfigDiff{IndexingThreshold: qdrant.PtrOf(uint64(1000))},
		Params:           &qdrant.CollectionParamsDiff{ReplicationFactor: qdrant.PtrOf(uint32(2)), OnDiskPayload: qdrant.PtrOf(false)},
		HnswConfig:       &qdrant.HnswConfigDiff{M: qdrant.PtrOf(uint64(32))},
		VectorsConfig: &qdrant.VectorsConfigDiff{Config: &qdrant.VectorsConfigDiff_Params{Params: &qdrant.VectorParamsDiff{
			OnDisk: qdrant.PtrOf(true), HnswConfig: &qdrant.HnswConfigDiff{EfConstruct: qdrant.PtrOf(uint64(64))}}}},
		QuantizationConfig: qdrant.NewQuantizationDiffScalar(&qdrant.ScalarQuantization{Type: qdrant.QuantizationType_Int8}),
		StrictModeConfig:   &qdrant.StrictModeConfig{Enabled: qdrant.PtrOf(true)},
		Metadata:           md,
	})
	if err != nil {
		t.Fatal(err)
	}
	// A second update merges into the first.
	err = db.UpdateCollection(ctx, &qdrant.UpdateCollection{
		CollectionName:     "c",
		StrictModeConfig:   &qdrant.StrictModeConfig{MaxQueryLimit: qdrant.PtrOf(uint32(50))},
		QuantizationConfig: qdrant.NewQuantizationDiffDisabled(),
		Metadata:           valueMap(t, map[string]any{"n": 2}),
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(db *store.DB) {
		t.Helper()
		info, err := db.CollectionInfo(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		cfg := info.GetConfig()
		want := before.GetConfig()
		want.OptimizerConfig.IndexingThreshold = qdrant.PtrOf(uint64(1000))
		want.Params.ReplicationFactor = qdrant.PtrOf(uint32(2))
		want.Params.OnDiskPayload = false
		want.HnswConfig.M = qdrant.PtrOf(uint64(32))
		vp := want.Params.GetVectorsConfig().GetParams()
		vp.OnDisk = qdrant.PtrOf(true)
		vp.HnswConfig = &qdrant.HnswConfigDiff{EfConstruct: qdrant.PtrOf(uint64(64))}
		want.StrictModeConfig = &qdrant.StrictModeConfig{Enabled: qdrant.PtrOf(true), MaxQueryLimit: qdrant.PtrOf(uint32(50))}
		want.Metadata = valueMap(t, map[string]any{"owner": "x", "n": 2})
		want.QuantizationConfig = nil
		if diff := cmp.Diff(want, cfg, protocmp.Transform()); diff != "" {
			t.Fatalf("config (-want +got):\n%s", diff)
		}
	}
	check(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, dir)
	check(db)

	errs := []struct {
		name string
		req  *qdrant.UpdateCollection
		code codes.Code
		msg  string
	}{
		{"missing collection", &qdrant.UpdateCollection{CollectionName: "nope"}, codes.NotFound, "Not found: Collection `nope` doesn't exist!"},
		{"named vector", &qdrant.UpdateCollection{CollectionName: "c", VectorsConfig: &qdrant.VectorsConfigDiff{Config: &qdrant.VectorsConfigDiff_ParamsMap{
			ParamsMap: &qdrant.VectorParamsDiffMap{Map: map[string]*qdrant.VectorParamsDiff{"text": {OnDisk: qdrant.PtrOf(true)}}}}}},
			codes.InvalidArgument, "Wrong input: Not existing vector name error: text"},
		{"ef_construct", &qdrant.UpdateCollection{CollectionName: "c", HnswConfig: &qdrant.HnswConfigDiff{EfConstruct: qdrant.PtrOf(uint64(2))}},
			codes.InvalidArgument, "Validation error in body: [hnsw_config.ef_construct: value 2 invalid, must be 4 or larger]"},
		{"replication factor", &qdrant.UpdateCollection{CollectionName: "c", Params: &qdrant.CollectionParamsDiff{ReplicationFactor: qdrant.PtrOf(uint32(0))}},
			codes.InvalidArgument, "Validation error in body: [params.replication_factor: value 0 invalid, must be 1 or larger]"},
		{"vacuum", &qdrant.UpdateCollection{CollectionName: "c", OptimizersConfig: &qdrant.OptimizersConfigDiff{VacuumMinVectorNumber: qdrant.PtrOf(uint64(5))}},
			codes.InvalidArgument, "Validation error in body: [optimizers_config.vacuum_min_vector_number: value 5 invalid, must be 100 or larger]"},
		{"sparse", &qdrant.UpdateCollection{CollectionName: "c", SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{"s": {}})},
			codes.Unimplemented, "memrank embedded store: sparse vectors are not supported"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) { wantStatus(t, db.UpdateCollection(ctx, tc.req), tc.code, tc.msg) })
	}
	check(db)
}
