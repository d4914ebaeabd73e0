// Placeholder until the proxy exists (issue 4 replaces it with the CLI and wiring).
#include <QCoreApplication>
#include <QTextStream>

int main(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    QTextStream(stdout) << "loopscope " << LOOPSCOPE_VERSION << " (proxy not built yet)\n";
    return 0;
}
