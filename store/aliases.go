package store

import (
	"context"
	"sort"

	"github.com/qdrant/go-client/qdrant"
	bolt "go.etcd.io/bbolt"
)

// Aliases follow Qdrant v1.19 (lib/storage/src/content_manager/
// alias_mapping.rs, toc/collection_meta_ops.rs update_aliases,
// toc/mod.rs resolve_name, src/common/collections.rs):
//
//   - create_alias needs an existing collection (its real name, not an
//     alias: NotFound otherwise) and an alias name that is not a
//     collection's (AlreadyExists); an existing alias of that name is
//     re-pointed;
//   - delete_alias of a missing alias does nothing; rename_alias of a
//     missing one is NotFound ("Alias x does not exists!");
//   - every request that names a collection accepts an alias (an alias
//     wins over a collection of the same name), except DeleteCollection;
//     deleting a collection deletes its aliases; a collection cannot be
//     created under an alias's name;
//   - ListAliases lists every alias by collection name, then alias name;
//     ListCollectionAliases lists the aliases of the collection named as
//     given (no alias resolution, and none for an unknown collection).
//
// One difference: Qdrant saves after each action, so when an action fails
// the ones before it stay applied; here all the actions of one request are
// one transaction, applied entirely or not at all.

// UpdateAliases applies alias actions in order.
func (db *DB) UpdateAliases(ctx context.Context, req *qdrant.ChangeAliases) error {
	if req.Timeout != nil && req.GetTimeout() == 0 {
		return validation("timeout", "value 0 invalid, must be 1 or larger")
	}
	for _, a := range req.GetActions() {
		if a.GetAction() == nil {
			return invalidArg("Malformed AliasOperation type")
		}
	}
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	db.wmu.Lock()
	defer db.wmu.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	next := make(map[string]string, len(db.aliases))
	for k, v := range db.aliases {
		next[k] = v
	}
	for _, a := range req.GetActions() {
		switch o := a.GetAction().(type) {
		case *qdrant.AliasOperations_CreateAlias:
			coll, alias := o.CreateAlias.GetCollectionName(), o.CreateAlias.GetAliasName()
			if db.collections[coll] == nil {
				return collectionNotFound(coll)
			}
			if db.collections[alias] != nil {
				return &Error{Kind: KindAlreadyExists, Msg: "Wrong input: Collection `" + alias + "` already exists!"}
			}
			next[alias] = coll
		case *qdrant.AliasOperations_DeleteAlias:
			delete(next, o.DeleteAlias.GetAliasName())
		case *qdrant.AliasOperations_RenameAlias:
			old, nu := o.RenameAlias.GetOldAliasName(), o.RenameAlias.GetNewAliasName()
			coll, ok := next[old]
			if !ok {
				return notFound("Alias %s does not exists!", old)
			}
			delete(next, old)
			next[nu] = coll
		}
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketAliases); err != nil {
			return err
		}
		b, err := tx.CreateBucket(bucketAliases)
		if err != nil {
			return err
		}
		for k, v := range next {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return internal(err, "update aliases")
	}
	db.aliases = next
	return nil
}

// ListAliases lists every alias, by collection name, then alias name.
func (db *DB) ListAliases(ctx context.Context) ([]*qdrant.AliasDescription, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	db.mu.RLock()
	out := make([]*qdrant.AliasDescription, 0, len(db.aliases))
	for a, c := range db.aliases {
		out = append(out, &qdrant.AliasDescription{AliasName: a, CollectionName: c})
	}
	db.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].CollectionName != out[j].CollectionName {
			return out[i].CollectionName < out[j].CollectionName
		}
		return out[i].AliasName < out[j].AliasName
	})
	return out, nil
}

// ListCollectionAliases lists the aliases of one collection, by name.
func (db *DB) ListCollectionAliases(ctx context.Context, collection string) ([]*qdrant.AliasDescription, error) {
	if err := validateName(collection, false); err != nil {
		return nil, err
	}
	all, err := db.ListAliases(ctx)
	if err != nil {
		return nil, err
	}
	var out []*qdrant.AliasDescription
	for _, a := range all {
		if a.GetCollectionName() == collection {
			out = append(out, a)
		}
	}
	return out, nil
}
