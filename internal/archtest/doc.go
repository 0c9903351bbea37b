// Package archtest holds the tests of the module's architecture: which
// package may import which (arrows only point down; see
// docs/ARCHITECTURE.md), and who may read the environment and build
// models. It has no code of its own.
package archtest
