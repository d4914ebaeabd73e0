// loopscope: the proxy and the inspector window (--headless: the proxy alone).
#include "launcher.h"
#include "windowfrontend.h"

int main(int argc, char *argv[]) {
    InspectorWindowFrontEnd window;
    return runLoopscope(argc, argv, &window);
}
