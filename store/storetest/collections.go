package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// Error texts are Qdrant's, from lib/storage/src/content_manager/collections_ops.rs
// (validate_collection_not_exists / validate_collection_exists) rendered through StorageError's
// "Wrong input: " / "Not found: " prefixes (lib/storage/src/content_manager/errors.rs).
func alreadyExistsText(name string) string {
	return fmt.Sprintf("Wrong input: Collection `%s` already exists!", name)
}

func notFoundText(name string) string {
	return fmt.Sprintf("Not found: Collection `%s` doesn't exist!", name)
}

func testCollections(t *testing.T, target Target) {
	testCollectionsLifecycle(t, target)
	testCollectionsConflicts(t, target)
	testCollectionsValidation(t, target)
}

// testCollectionsLifecycle covers creating, getting, listing and deleting collections.
func testCollectionsLifecycle(t *testing.T, target Target) {
	t.Run("create and get reflect size and distance", func(t *testing.T) {
		c := connect(t, target)
		cases := []struct {
			name     string
			size     uint64
			distance qdrant.Distance
		}{
			{"Cosine", 3, qdrant.Distance_Cosine},
			{"Dot", 4, qdrant.Distance_Dot},
			{"Euclid", 5, qdrant.Distance_Euclid},
			{"Manhattan", 6, qdrant.Distance_Manhattan},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := opContext(t)
				coll := newCollection(t, c, tc.size, tc.distance)
				info, err := c.GetCollectionInfo(ctx, coll)
				if err != nil {
					t.Fatalf("get collection: %v", err)
				}
				params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
				if params.GetSize() != tc.size || params.GetDistance() != tc.distance {
					t.Errorf("vector params: got size %d distance %v, want size %d distance %v",
						params.GetSize(), params.GetDistance(), tc.size, tc.distance)
				}
				exists, err := c.CollectionExists(ctx, coll)
				if err != nil || !exists {
					t.Errorf("CollectionExists = %v, %v; want true, nil", exists, err)
				}
				if got := count(t, c, coll, nil); got != 0 {
					t.Errorf("new collection has %d points, want 0", got)
				}
			})
		}
	})

	t.Run("list contains created collections", func(t *testing.T) {
		c := connect(t, target)
		a := newCollection(t, c, 2, qdrant.Distance_Dot)
		b := newCollection(t, c, 2, qdrant.Distance_Cosine)
		names, err := c.ListCollections(opContext(t))
		if err != nil {
			t.Fatalf("list collections: %v", err)
		}
		// A shared Qdrant may hold other collections: only ours are asserted.
		for _, want := range []string{a, b} {
			if !slices.Contains(names, want) {
				t.Errorf("ListCollections = %v, missing %q", names, want)
			}
		}
	})

	t.Run("delete removes the collection", func(t *testing.T) {
		c := connect(t, target)
		ctx := opContext(t)
		coll := newCollection(t, c, 2, qdrant.Distance_Dot)
		upsert(t, c, coll, point(t, num(1), []float32{1, 0}, nil))
		if err := c.DeleteCollection(ctx, coll); err != nil {
			t.Fatalf("delete collection: %v", err)
		}
		exists, err := c.CollectionExists(ctx, coll)
		if err != nil || exists {
			t.Errorf("CollectionExists after delete = %v, %v; want false, nil", exists, err)
		}
		names, err := c.ListCollections(ctx)
		if err != nil {
			t.Fatalf("list collections: %v", err)
		}
		if slices.Contains(names, coll) {
			t.Errorf("ListCollections after delete still contains %q", coll)
		}
		_, err = c.GetCollectionInfo(ctx, coll)
		wantStatus(t, err, codes.NotFound, notFoundText(coll))
		// A collection created again under the same name starts empty.
		createCollection(t, c, coll, 2, qdrant.Distance_Dot)
		if got := count(t, c, coll, nil); got != 0 {
			t.Errorf("re-created collection has %d points, want 0", got)
		}
	})
}

// testCollectionsConflicts covers deleting, recreating and using missing or existing collections.
func testCollectionsConflicts(t *testing.T, target Target) {
	t.Run("delete of a missing collection answers false", func(t *testing.T) {
		c := connect(t, target)
		ctx := opContext(t)
		coll := collectionName(t)
		// Qdrant answers result=false, not an error (toc delete_collection returns Ok(false);
		// the REST test cleanup relies on it) ...
		res, err := c.GetCollectionsClient().Delete(ctx, &qdrant.DeleteCollection{CollectionName: coll})
		if err != nil {
			t.Fatalf("raw Delete of a missing collection: %v, want result=false and no error", err)
		}
		if res.GetResult() {
			t.Errorf("raw Delete of a missing collection: result=true, want false")
		}
		// ... which go-client's DeleteCollection turns into an error.
		err = c.DeleteCollection(ctx, coll)
		if err == nil {
			t.Errorf("DeleteCollection of a missing collection: no error, want one")
		} else {
			wantQdrantError(t, err)
		}
	})

	t.Run("create twice is AlreadyExists", func(t *testing.T) {
		c := connect(t, target)
		coll := newCollection(t, c, 4, qdrant.Distance_Cosine)
		err := c.CreateCollection(opContext(t), &qdrant.CreateCollection{
			CollectionName: coll,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 8, Distance: qdrant.Distance_Dot}),
		})
		wantStatus(t, err, codes.AlreadyExists, alreadyExistsText(coll))
		// The first definition stays.
		info, err := c.GetCollectionInfo(opContext(t), coll)
		if err != nil {
			t.Fatalf("get collection: %v", err)
		}
		if got := info.GetConfig().GetParams().GetVectorsConfig().GetParams().GetSize(); got != 4 {
			t.Errorf("size after the failed second create = %d, want 4", got)
		}
	})

	t.Run("operations on a missing collection are NotFound", func(t *testing.T) {
		c := connect(t, target)
		coll := collectionName(t)
		sel := qdrant.NewPointsSelector(num(1))
		ops := []struct {
			name string
			call func() error
		}{
			{"GetCollectionInfo", func() error {
				_, err := c.GetCollectionInfo(opContext(t), coll)
				return err
			}},
			{"Upsert", func() error {
				_, err := c.Upsert(opContext(t), &qdrant.UpsertPoints{CollectionName: coll, Wait: waitApplied(),
					Points: []*qdrant.PointStruct{point(t, num(1), []float32{1, 0}, nil)}})
				return err
			}},
			{"Get", func() error {
				_, err := c.Get(opContext(t), &qdrant.GetPoints{CollectionName: coll, Ids: ids(1)})
				return err
			}},
			{"Delete", func() error {
				_, err := c.Delete(opContext(t), &qdrant.DeletePoints{CollectionName: coll, Wait: waitApplied(), Points: sel})
				return err
			}},
			{"Count", func() error {
				_, err := c.Count(opContext(t), &qdrant.CountPoints{CollectionName: coll})
				return err
			}},
			{"Scroll", func() error {
				_, err := c.Scroll(opContext(t), &qdrant.ScrollPoints{CollectionName: coll})
				return err
			}},
			{"Query", func() error {
				_, err := c.Query(opContext(t), &qdrant.QueryPoints{CollectionName: coll, Query: qdrant.NewQuery(1, 0)})
				return err
			}},
			{"Search", func() error {
				_, err := c.GetPointsClient().Search(opContext(t), &qdrant.SearchPoints{
					CollectionName: coll, Vector: []float32{1, 0}, Limit: 1})
				return err
			}},
			{"SetPayload", func() error {
				_, err := c.SetPayload(opContext(t), &qdrant.SetPayloadPoints{CollectionName: coll, Wait: waitApplied(),
					Payload: payload(t, map[string]any{"a": 1}), PointsSelector: sel})
				return err
			}},
			{"CreateFieldIndex", func() error {
				_, err := c.CreateFieldIndex(opContext(t), &qdrant.CreateFieldIndexCollection{CollectionName: coll,
					Wait: waitApplied(), FieldName: "a", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()})
				return err
			}},
		}
		for _, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				wantStatus(t, op.call(), codes.NotFound, notFoundText(coll))
			})
		}
		exists, err := c.CollectionExists(opContext(t), coll)
		if err != nil || exists {
			t.Errorf("CollectionExists of a missing collection = %v, %v; want false, nil", exists, err)
		}
	})
}

// testCollectionsValidation covers the rejection of bad names and of vector size 0.
func testCollectionsValidation(t *testing.T, target Target) {
	t.Run("bad names are rejected", func(t *testing.T) {
		c := connect(t, target)
		// CreateCollection.collection_name is validated with length(min = 1, max = 255) and
		// validate_collection_name, which refuses < > : " / \ | ? * NUL and 0x1F
		// (lib/api/build.rs, lib/common/common/src/validation.rs).
		base := collectionName(t)
		cases := []struct{ name, coll string }{
			{"empty", ""},
			{"slash", base + "/x"},
			{"backslash", base + `\x`},
			{"colon", base + ":x"},
			{"star", base + "*x"},
			{"NUL", base + "\x00x"},
			{"256 bytes", base + strings.Repeat("x", 256-len(base))},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				err := c.CreateCollection(opContext(t), &qdrant.CreateCollection{
					CollectionName: tc.coll,
					VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Dot}),
				})
				if err == nil {
					// Don't leave it behind on a shared server.
					deleteCollectionAtEnd(t, func() *qdrant.Client { return c }, tc.coll)
				}
				wantStatus(t, err, codes.InvalidArgument, "")
			})
		}
	})

	t.Run("vector size 0 is rejected", func(t *testing.T) {
		c := connect(t, target)
		coll := collectionName(t)
		// VectorParams.size is validated with range(min = 1, max = 65536) (lib/api/build.rs).
		err := c.CreateCollection(opContext(t), &qdrant.CreateCollection{
			CollectionName: coll,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 0, Distance: qdrant.Distance_Dot}),
		})
		if err == nil {
			deleteCollectionAtEnd(t, func() *qdrant.Client { return c }, coll)
		}
		wantStatus(t, err, codes.InvalidArgument, "")
	})
}
