"""Short factual questions with answers a string match can check: how chapter 5 measures whether an edited
model still says true things.

Written for this book. Each question has one uncontroversial answer that a small instruction-tuned model
usually knows, phrased so the answer is a word or a number; an answer counts as correct when the model's
greedy continuation contains any of the accepted strings as a whole word (lower case; digits and words both
accepted for numbers; "0" does not match inside "100"). An empty continuation is simply wrong. The set spans
geography, science, arithmetic, language, history and everyday knowledge so that no single kind of knowledge
decides the rate.
"""
from __future__ import annotations

FACTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # geography
    ("What is the capital of France?", ("paris",)),
    ("What is the capital of Japan?", ("tokyo",)),
    ("What is the capital of Italy?", ("rome",)),
    ("What is the capital of Germany?", ("berlin",)),
    ("What is the capital of Spain?", ("madrid",)),
    ("What is the capital of the United Kingdom?", ("london",)),
    ("What is the capital of Russia?", ("moscow",)),
    ("What is the capital of Egypt?", ("cairo",)),
    ("What is the capital of Canada?", ("ottawa",)),
    ("What is the capital of China?", ("beijing",)),
    ("On which continent is Kenya?", ("africa",)),
    ("On which continent is Brazil?", ("south america",)),
    ("What is the largest ocean on Earth?", ("pacific",)),
    ("What is the longest river in Africa?", ("nile",)),
    ("In which country are the pyramids of Giza?", ("egypt",)),
    ("In which city is the Eiffel Tower?", ("paris",)),
    # science
    ("What is the largest planet in our solar system?", ("jupiter",)),
    ("Which planet is known as the Red Planet?", ("mars",)),
    ("What is the chemical formula of water?", ("h2o", "h₂o")),
    ("What gas do plants absorb from the air for photosynthesis?", ("carbon dioxide", "co2", "co₂")),
    ("What gas do humans need to breathe to live?", ("oxygen",)),
    ("What is the chemical symbol for gold?", ("au",)),
    ("What star is at the center of our solar system?", ("sun",)),
    ("At what temperature in Celsius does water freeze?", ("0", "zero")),
    ("At what temperature in Celsius does water boil at sea level?", ("100", "hundred")),
    ("What organ pumps blood through the human body?", ("heart",)),
    ("How many legs does an insect have?", ("six", "6")),
    ("How many legs does a spider have?", ("eight", "8")),
    ("What is the closest planet to the Sun?", ("mercury",)),
    ("What force pulls objects toward the Earth?", ("gravity", "gravitation")),
    # arithmetic and numbers
    ("What is two plus two?", ("four", "4")),
    ("What is five times six?", ("thirty", "30")),
    ("What is ten minus three?", ("seven", "7")),
    ("What is nine plus one?", ("ten", "10")),
    ("How many days are in a week?", ("seven", "7")),
    ("How many months are in a year?", ("twelve", "12")),
    ("How many hours are in a day?", ("twenty-four", "twenty four", "24")),
    ("How many minutes are in an hour?", ("sixty", "60")),
    ("How many sides does a triangle have?", ("three", "3")),
    ("How many sides does a square have?", ("four", "4")),
    ("How many continents are there on Earth?", ("seven", "7")),
    # language and literature
    ("Who wrote Romeo and Juliet?", ("shakespeare",)),
    ("What language is mainly spoken in Brazil?", ("portuguese",)),
    ("What language is mainly spoken in Mexico?", ("spanish",)),
    ("What is the opposite of hot?", ("cold",)),
    ("What is the opposite of up?", ("down",)),
    ("What is the plural of mouse?", ("mice",)),
    ("What is the last letter of the English alphabet?", ("z",)),
    # history and people
    ("Who was the first President of the United States?", ("washington",)),
    ("Who painted the Mona Lisa?", ("leonardo", "da vinci")),
    ("Who developed the theory of relativity?", ("einstein",)),
    ("In which year did the Second World War end?", ("1945",)),
    ("Who was the first person to walk on the Moon?", ("armstrong",)),
    # everyday knowledge
    ("What color is the sky on a clear day?", ("blue",)),
    ("What color are ripe bananas?", ("yellow",)),
    ("What color is grass?", ("green",)),
    ("What do bees make?", ("honey",)),
    ("What animal is known as the king of the jungle?", ("lion",)),
    ("What is frozen water called?", ("ice",)),
    ("What is the largest mammal on Earth?", ("blue whale", "whale")),
    ("Which animal says moo?", ("cow",)),
    ("What do you call a baby dog?", ("puppy", "pup")),
)
