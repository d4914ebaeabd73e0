// loopscope-headless: Loopscope without a window. Links no Qt Widgets (scripts/test checks the
// binary), so it runs where no GUI library is installed.
#include "launcher.h"

int main(int argc, char *argv[]) {
    return runLoopscope(argc, argv, nullptr);
}
