#include "textflag.h"

// func Grow()
//
// Its frame is all it does: the stack check of the prologue makes the
// runtime grow the stack to hold it. Nothing is written to it.
TEXT ·Grow(SB), 0, $65536-0
	RET
