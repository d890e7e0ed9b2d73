# SPDX-License-Identifier: ISC
# sqlite3: a database file in /tmp, a join and an aggregate, the file copied to /out.
import shutil
import sqlite3

con = sqlite3.connect("/tmp/shop.db")
con.executescript("""
create table customers(id integer primary key, name text);
create table orders(id integer primary key, customer integer references customers, amount real);
insert into customers values (1, 'ada'), (2, 'bob');
insert into orders(customer, amount) values (1, 10.0), (1, 5.5), (2, 7.25);
""")
rows = con.execute("select name, sum(amount) from orders join customers on customers.id = customer "
                   "group by name order by name").fetchall()
con.commit()
con.close()
shutil.copy("/tmp/shop.db", "/out/shop.db")
print("RESULT", rows)
