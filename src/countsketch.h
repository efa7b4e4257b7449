/* Count sketch (PLACEHOLDER: the s2 issue fills this in). */
#ifndef RB_COUNTSKETCH_H
#define RB_COUNTSKETCH_H
#endif
