# Fills a calibre library made by calibredb with N books' metadata (no book files), for measuring
# readers of metadata.db (docs/benchmarks.md, "calibre metadata.db readers"). calibre's own schema,
# triggers and the three custom columns come from calibredb; the rows are written here with the two
# SQL functions calibre's triggers call. calibre then lists the N books as its own.
#   mkdir lib && calibredb list --library-path lib      # an empty library, calibre's schema
#   calibredb add_custom_column --library-path lib read Read bool
#   calibredb add_custom_column --library-path lib shelf "My Shelf" text
#   calibredb add_custom_column --library-path lib genre Genres text --is-multiple
#   python3 test/bench/calibre-fill.py lib/metadata.db 10000
import random, sqlite3, sys, uuid
db, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(1)
c = sqlite3.connect(db)
c.create_function('title_sort', 1, lambda t: t)
c.create_function('uuid4', 0, lambda: str(uuid.uuid4()))
words = 'winter garden lost key archive river night crown silent city glass shadow empire ocean letters north machine'.split()
first = ['Amélie','Erik','Grace','Fyodor','Haruki','José','Ngozi','Ursula','Thomas','Margarethe','Aleksandr','Chen','Priya','Liam','Sofia']
last = ['Fournier','Lindgren','Holloway','Sokolov','Tanaka','Álvarez','Okonkwo','Lindqvist','Whitfield','von Stein','Petrov','Wei','Sharma','Byrne','Rossi']
langs = ['eng','fra','deu','spa','jpn','rus','ita','nld']
c.execute('BEGIN')
def ins(table, cols, vals):
    return c.execute(f'insert into {table} ({",".join(cols)}) values ({",".join("?"*len(vals))})', vals).lastrowid
authors = [ins('authors', ['name','sort','link'], [f'{f} {l} {i}', f'{l} {i}, {f}', '']) for i in range(3000) for f, l in [(rnd.choice(first), rnd.choice(last))]]
series = [ins('series', ['name','sort'], [f'The {rnd.choice(words).title()} Cycle {i}', f'{rnd.choice(words).title()} Cycle {i}']) for i in range(800)]
tags = [ins('tags', ['name'], [f'{rnd.choice(words)}-{i}']) for i in range(300)]
pubs = [ins('publishers', ['name'], [f'{rnd.choice(words).title()} House {i}']) for i in range(200)]
lang_ids = [ins('languages', ['lang_code'], [l]) for l in langs]
ratings = {r: ins('ratings', ['rating'], [r]) for r in range(0, 11)}
shelves = [ins('custom_column_2', ['value'], [f'Shelf {i}']) for i in range(20)]
genres = [ins('custom_column_3', ['value'], [f'genre {i}']) for i in range(50)]
for b in range(1, n + 1):
    title = ' '.join(rnd.choice(words) for _ in range(rnd.randint(2, 5))).title() + f' {b}'
    au = rnd.sample(authors, rnd.choice([1, 1, 1, 2, 3]))
    folder = f'Author {au[0]}/{title[:30]} ({b})'
    bid = ins('books', ['title','sort','timestamp','pubdate','series_index','author_sort','path','has_cover','last_modified'],
              [title, title, '2026-01-01 10:00:00.000000+00:00', f'{rnd.randint(1800, 2025)}-06-01 12:00:00+00:00',
               rnd.choice([1.0, 2.0, 2.5, 3.0]), f'Sort {au[0]}', folder, int(rnd.random() < 0.9),
               f'2026-01-02 10:{b % 60:02d}:00.{b:06d}+00:00'])
    for a in au: ins('books_authors_link', ['book','author'], [bid, a])
    if rnd.random() < 0.4: ins('books_series_link', ['book','series'], [bid, rnd.choice(series)])
    for t in rnd.sample(tags, rnd.randint(0, 5)): ins('books_tags_link', ['book','tag'], [bid, t])
    ins('books_publishers_link', ['book','publisher'], [bid, rnd.choice(pubs)])
    ins('books_languages_link', ['book','lang_code','item_order'], [bid, rnd.choice(lang_ids), 0])
    ins('identifiers', ['book','type','val'], [bid, 'isbn', f'978{rnd.randint(10**9, 10**10 - 1)}'])
    if rnd.random() < 0.5: ins('identifiers', ['book','type','val'], [bid, 'goodreads', str(rnd.randint(1, 10**8))])
    if rnd.random() < 0.3: ins('identifiers', ['book','type','val'], [bid, 'amazon', f'B0{rnd.randint(10**7, 10**8 - 1)}'])
    ins('comments', ['book','text'], [bid, ''.join(f'<p>{" ".join(rnd.choice(words) for _ in range(20))} &amp; <i>more</i>.</p>' for _ in range(4))])
    if rnd.random() < 0.4: ins('books_ratings_link', ['book','rating'], [bid, ratings[rnd.randint(1, 10)]])
    for fmt in rnd.sample(['EPUB','PDF','AZW3','MOBI','CBZ'], rnd.choice([1, 1, 2])):
        ins('data', ['book','format','uncompressed_size','name'], [bid, fmt, rnd.randint(10**4, 10**7), f'{title[:30]} - Author'])
    if rnd.random() < 0.3: ins('custom_column_1', ['book','value'], [bid, int(rnd.random() < 0.7)])
    if rnd.random() < 0.2: ins('books_custom_column_2_link', ['book','value'], [bid, rnd.choice(shelves)])
    for g in rnd.sample(genres, rnd.randint(0, 2)): ins('books_custom_column_3_link', ['book','value'], [bid, g])
c.execute('COMMIT')
c.execute('VACUUM')
print('books', c.execute('select count(*) from books').fetchone()[0])
