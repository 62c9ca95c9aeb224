// Package housestyle holds no code: its test checks the rules of how
// memrank is written that a compiler and a linter do not (README,
// "Contributing"): no function over 120 lines outside tests, no exported
// package-level variable but an Err sentinel, no init functions, no
// os.Exit outside a command.
package housestyle
