#include "check.h"
int main(void) { return og_check_report("test_spec"); }
