//go:build !linux && !darwin

package main

// processUsage returns the zero usage: the system does not say.
func processUsage() usage { return usage{} }
