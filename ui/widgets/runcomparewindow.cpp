#include "widgets/runcomparewindow.h"

#include "models/flowqueryclient.h"
#include "widgets/diffview.h"

#include "common/futurechain.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <memory>
#include <utility>

namespace loopscope {

namespace {

using Runs = std::pair<RunConversation, RunConversation>;

QString signedNumber(double d, int decimals) {
    const QString n = QLocale().toString(d, 'f', decimals);
    return d > 0 ? u'+' + n : n;
}

} // namespace

RunCompareWindow::RunCompareWindow(QWidget *parent)
    : QWidget(parent)
    , m_status(new QLabel(this))
    , m_table(new QTableWidget(this))
    , m_diff(new DiffView(this))
    , m_close(new QPushButton(tr("Close"), this)) {
    setWindowTitle(tr("Compare runs"));
    m_status->setWordWrap(true);
    m_table->setColumnCount(3);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    connect(m_close, &QPushButton::clicked, this, &QWidget::close);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_diff);
    split->setStretchFactor(1, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_close);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(split, 1);
    layout->addLayout(buttons);
}

RunCompareWindow *RunCompareWindow::open(QWidget *parent, FlowQueryClient *client,
                                         const QString &left, const QString &right) {
    auto *window = new RunCompareWindow(parent);
    window->setWindowFlag(Qt::Window);
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->m_status->setText(tr("Reading %1 and %2…").arg(left, right));
    window->resize(1000, 700);
    window->show();
    if (!client)
        return window;
    // Each run is read on its own pool thread (the client has two): both at once.
    const auto read = [client](const QString &run) {
        return client->submit<RunConversation>([run](const FlowQuery &query) {
            RunConversation conversation;
            conversation.appendRun(query, run, 0);
            conversation.finish();
            return conversation;
        });
    };
    auto runs = std::make_shared<Runs>();
    auto pending = std::make_shared<int>(2);
    const auto done = [window, left, right, runs, pending] {
        if (--*pending == 0)
            window->setRuns(runs->first, left, runs->second, right);
    };
    whenFinished(read(left), window, [runs, done](const QFuture<RunConversation> &f) {
        runs->first = resultOr(f, RunConversation());
        done();
    });
    whenFinished(read(right), window, [runs, done](const QFuture<RunConversation> &f) {
        runs->second = resultOr(f, RunConversation());
        done();
    });
    return window;
}

void RunCompareWindow::setRuns(const RunConversation &left, const QString &leftName,
                               const RunConversation &right, const QString &rightName) {
    const QString leftTitle = left.title().isEmpty() ? leftName : left.title();
    const QString rightTitle = right.title().isEmpty() ? rightName : right.title();
    setWindowTitle(tr("Compare runs — %1 ↔ %2").arg(leftName, rightName));
    m_status->setText(tr("Left: %1\nRight: %2").arg(leftTitle, rightTitle));

    const RunConversation::Totals &a = left.totals();
    const RunConversation::Totals &b = right.totals();
    struct Row {
        QString name;
        double left, right;
        int decimals;
    };
    const QList<Row> rows{
        {tr("Turns"), double(a.turns), double(b.turns), 0},
        {tr("Input tokens"), double(a.tokens.input), double(b.tokens.input), 0},
        {tr("Output tokens"), double(a.tokens.output), double(b.tokens.output), 0},
        {tr("Cache read tokens"), double(a.tokens.cacheRead), double(b.tokens.cacheRead), 0},
        {tr("Cache write tokens"), double(a.tokens.cacheWrite), double(b.tokens.cacheWrite), 0},
        {tr("Cost (USD)"), a.tokens.cost, b.tokens.cost, 4},
        {tr("Duration (s)"), a.durationMs / 1000, b.durationMs / 1000, 2},
        {tr("Tool calls"), double(a.toolCalls), double(b.toolCalls), 0},
        {tr("Errors"), double(a.errors), double(b.errors), 0},
    };
    m_table->setRowCount(int(rows.size()));
    m_table->setHorizontalHeaderLabels({leftName, rightName, tr("Difference")});
    QStringList names;
    for (int r = 0; r < rows.size(); ++r) {
        const Row &row = rows.at(r);
        names << row.name;
        const bool unknownCost =
            r == 5 && (!a.tokens.costKnown || !b.tokens.costKnown); // no price for a model
        const auto cell = [&](double v, bool known) {
            auto *item = new QTableWidgetItem(known ? QLocale().toString(v, 'f', row.decimals)
                                                    : tr("unknown"));
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            return item;
        };
        m_table->setItem(r, 0, cell(row.left, r != 5 || a.tokens.costKnown));
        m_table->setItem(r, 1, cell(row.right, r != 5 || b.tokens.costKnown));
        auto *diff = new QTableWidgetItem(
            unknownCost
                ? QString()
                : (row.right == row.left ? tr("same")
                                         : signedNumber(row.right - row.left, row.decimals)));
        diff->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(r, 2, diff);
    }
    m_table->setVerticalHeaderLabels(names);
    m_diff->setTexts(left.text(), right.text(), leftTitle, rightTitle);
    emit loaded();
}

void RunCompareWindow::keyPressEvent(QKeyEvent *event) {
    if (event->key() == Qt::Key_Escape && event->modifiers() == Qt::NoModifier) {
        close();
        return;
    }
    QWidget::keyPressEvent(event);
}

} // namespace loopscope
