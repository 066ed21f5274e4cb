//go:build !linux

package main

import "errors"

// sockmapRelay is Linux's.
type sockmapRelay struct{}

func startSockmapRelay(string) (*sockmapRelay, error) { return nil, errors.ErrUnsupported }
func (*sockmapRelay) Addr() string                    { return "" }
func (*sockmapRelay) Close()                          {}
