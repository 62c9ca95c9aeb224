// Package deploy holds the tests of memrank's deployment artefacts (the
// container image, the compose file, the Helm chart and the alert rules).
// It is a Go module of its own so that the Kubernetes, Helm and compose
// libraries the tests use stay out of the memrank binary's module.
package deploy
