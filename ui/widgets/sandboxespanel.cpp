#include "widgets/sandboxespanel.h"

#include "inspect/textformat.h"
#include "models/sandboxcommands.h"
#include "models/sandboxesmodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <iterator>

namespace loopscope {

SandboxesPanel::SandboxesPanel(SandboxesModel *model, SandboxCommands *commands, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_commands(commands)
    , m_view(new QTableView(this))
    , m_delete(new QPushButton(tr("Delete"), this))
    , m_deleteAll(new QPushButton(tr("Delete all"), this))
    , m_note(new QLabel(this))
    , m_tick(new QTimer(this)) {
    m_confirm = [this](const QString &question) {
        return QMessageBox::question(this, tr("Delete sandbox"), question,
                                     QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_view->setModel(model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->setAlternatingRowColors(true);
    setUpColumns();
    m_delete->setToolTip(tr("Delete the selected sandbox (Delete). The client's next request in "
                            "that session gets a fresh one."));
    m_deleteAll->setToolTip(tr("Delete every sandbox"));
    m_note->setWordWrap(true);
    if (commands)
        connect(commands, &SandboxCommands::availabilityChanged, this,
                &SandboxesPanel::updateButtons);

    connect(m_delete, &QPushButton::clicked, this, &SandboxesPanel::deleteSelected);
    connect(m_deleteAll, &QPushButton::clicked, this, &SandboxesPanel::deleteAll);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &SandboxesPanel::updateButtons);
    connect(model, &QAbstractItemModel::rowsInserted, this, &SandboxesPanel::updateButtons);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &SandboxesPanel::updateButtons);
    connect(model, &QAbstractItemModel::modelReset, this, &SandboxesPanel::updateButtons);
    // "Expires in" counts down without events.
    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, model, &SandboxesModel::refreshExpiry);
    m_tick->start();

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_note, 1);
    buttons->addWidget(m_delete);
    buttons->addWidget(m_deleteAll);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_view, 1);
    layout->addLayout(buttons);
    updateButtons();
}

namespace {

// Fixed widths in characters ('0' advances): wide enough for the usual values ("14 min 30 s",
// "deleting…", "HH:mm:ss"); longer ones are elided, their tool tip has them whole.
struct ColumnWidth {
    int column;
    int chars;
};
constexpr ColumnWidth kWidths[] = {
    {SandboxesModel::ContainerColumn, 11}, {SandboxesModel::SessionColumn, 8},
    {SandboxesModel::ExpiresColumn, 11},   {SandboxesModel::RunsColumn, 4},
    {SandboxesModel::StateColumn, 9},      {SandboxesModel::IdentityColumn, 7},
    {SandboxesModel::KindColumn, 9},       {SandboxesModel::BackendColumn, 7},
    {SandboxesModel::CreatedColumn, 8},    {SandboxesModel::LastUsedColumn, 8}};
// The columns that must show without scrolling, in the order they are shown first.
constexpr int kEssential = 5;

} // namespace

void SandboxesPanel::setUpColumns() {
    QHeaderView *header = m_view->horizontalHeader();
    header->setSectionsMovable(true);
    header->setStretchLastSection(true);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setTextElideMode(Qt::ElideRight);
    m_view->setTextElideMode(Qt::ElideMiddle); // container ids keep both ends
    const int digit = m_view->fontMetrics().horizontalAdvance(u'0');
    // Shown in kWidths order (model order stays what the model tests and sorting rely on).
    for (int visual = 0; visual < int(std::size(kWidths)); ++visual) {
        const int logical = kWidths[visual].column;
        header->moveSection(header->visualIndex(logical), visual);
        m_view->setColumnWidth(logical, digit * kWidths[visual].chars + 12);
    }
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(header, &QHeaderView::customContextMenuRequested, this,
            &SandboxesPanel::showHeaderMenu);
    header->setToolTip(tr("Right-click to show or hide columns; drag to reorder."));
    m_view->setMinimumWidth(essentialWidth());
}

int SandboxesPanel::essentialWidth() const {
    int width = 2 * m_view->frameWidth() + m_view->verticalScrollBar()->sizeHint().width();
    for (int i = 0; i < kEssential; ++i)
        width += m_view->columnWidth(kWidths[i].column);
    return width;
}

void SandboxesPanel::showHeaderMenu(const QPoint &pos) {
    QMenu menu(this);
    for (const ColumnWidth &c : kWidths) {
        QAction *action = menu.addAction(m_model->headerData(c.column, Qt::Horizontal).toString());
        action->setCheckable(true);
        action->setChecked(!m_view->isColumnHidden(c.column));
        action->setEnabled(c.column != SandboxesModel::ContainerColumn);
        connect(action, &QAction::toggled, m_view, [view = m_view, column = c.column](bool on) {
            view->setColumnHidden(column, !on);
        });
    }
    menu.exec(m_view->horizontalHeader()->mapToGlobal(pos));
}

QString SandboxesPanel::selectedContainerId() const {
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    return rows.isEmpty() ? QString()
                          : rows.first().data(SandboxesModel::ContainerIdRole).toString();
}

bool SandboxesPanel::deleteSelected() {
    const QString id = selectedContainerId();
    if (id.isEmpty() || !m_commands || !m_commands->isAvailable())
        return false;
    if (!m_confirm(tr("Delete sandbox %1? Its Python state is lost; the next request in its "
                      "session starts a fresh sandbox.")
                       .arg(id)))
        return false;
    if (!m_commands->deleteSandbox(id))
        return false;
    m_model->markDeleting(id);
    return true;
}

bool SandboxesPanel::deleteAll() {
    if (m_model->rowCount() == 0 || !m_commands || !m_commands->isAvailable())
        return false;
    if (!m_confirm(
            tr("Delete all %1? Their Python state is lost.")
                .arg(textformat::plural(m_model->rowCount(), tr("sandbox"), tr("sandboxes")))))
        return false;
    if (!m_commands->deleteAll())
        return false;
    for (const QString &id : m_model->containerIds())
        m_model->markDeleting(id);
    return true;
}

void SandboxesPanel::updateButtons() {
    const bool available = m_commands && m_commands->isAvailable();
    m_note->setText(available ? QString()
                              : tr("Sandbox registry not connected: deleting is unavailable."));
    m_delete->setEnabled(available && !selectedContainerId().isEmpty());
    m_deleteAll->setEnabled(available && m_model->rowCount() > 0);
}

} // namespace loopscope
