// What the test files share: the servers they run against, from the
// environment, and a fresh collection name per run.
//
// MEMRANK_URL                 a `memrank serve --demo` (tenancy off)
// MEMRANK_TENANCY_URL         a serve with tenancy by API key:
//                             tenancy.key user_id, api_keys {sdk-key-alice: alice,
//                             sdk-key-bob: bob}, admin_api_keys [sdk-key-admin]
// MEMRANK_TENANT_HEADER_URL   a serve with tenancy by header: tenancy.key user_id,
//                             tenancy.header x-tenant
//
// cmd/memrank's TestSDKJS starts all three and sets these. A test whose
// server is not given is skipped, saying so, or fails with
// MEMRANK_JS_TESTS=require (as CI sets it): there a skip would hide that the
// SDK was never tried.

import { randomBytes } from "node:crypto";
import net from "node:net";

export const keys = { alice: "sdk-key-alice", bob: "sdk-key-bob", admin: "sdk-key-admin" };

/** The server's URL, and the skip message when it is not set. */
export function server(name, what) {
  const url = process.env[name];
  if (url) {
    return { url, skip: false };
  }
  const how = `${name} is not set: start ${what} and set ${name} to its URL (cmd/memrank's TestSDKJS does both)`;
  if (process.env.MEMRANK_JS_TESTS === "require") {
    throw new Error(`${how} (MEMRANK_JS_TESTS=require: the SDK's tests must run)`);
  }
  return { url, skip: how };
}

/** A collection name no earlier run used. */
export function freshCollection(prefix) {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** An id the write path never gave (UUIDv5 ids have version 5). */
export const unknownId = "00000000-0000-4000-8000-000000000000";
