/* Count sketch (PLACEHOLDER: the s2 issue fills this in). */
#include "countsketch.h"
typedef int rb_countsketch_placeholder;
