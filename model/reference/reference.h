// The CPU reference: every op written from the math, and (later) a whole-model forward.
#pragma once
#include "elementwise.h"
#include "attention.h"
